/**
 * What AWS SAM CLI needs from the synthesized template (`sam local invoke`,
 * `sam local start-api -t cdk.out/Berth.template.json`): on every function the
 * construct path (`aws:cdk:path`) and where its bundled code was staged
 * (`aws:asset:path` -> cdk.out/asset.<hash>/index.mjs, `aws:asset:property: Code`).
 * The CDK CLI adds both by default; the app (cdk/bin/app.ts) sets them after the CLI's
 * context, so `cdk synth --no-asset-metadata` or a script's `new App()` still gives
 * SAM what it reads.
 * test/unit/cdk/sam.test.ts holds the template to it.
 */
export const SAM_CONTEXT = {
  'aws:cdk:enable-path-metadata': true,
  'aws:cdk:enable-asset-metadata': true,
} as const;
