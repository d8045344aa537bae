/**
 * `npx berth image [--every S --for S]`: write a forest image now (docs/consistency.md, "Cold
 * start: the forest image"), or one whenever the forest changed, every S seconds for a
 * while: the deploy window of a large cloud (docs/cost.md, "Deploying a large cloud"),
 * so that the containers a deploy starts replay seconds of the change log, not minutes.
 * Its snapshot reads every provider through the index first (as the maintenance
 * function's does), then follows the change log.
 */
export async function imageCommand(argv: string[]): Promise<number> {
  const { refreshForestImage, writeImagesFor } = await import('../functions/maintenance/image.js');
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    if (i < 0) return undefined;
    const v = Number(argv[i + 1]);
    if (!(v > 0)) throw new Error(`${flag} needs a number of seconds`);
    return v;
  };
  const everyS = value('--every');
  const forS = value('--for');
  const line = (r: Awaited<ReturnType<typeof refreshForestImage>>) =>
    `[berth image] ${r.written ? 'written' : 'not written'}: ${r.reason}${r.providers !== undefined ? ` (${r.providers} providers, ${r.delta ? 'a delta of ' : ''}${r.bytes} bytes in ${r.chunks} chunks, ${r.ms} ms)` : ''}`;
  if (everyS === undefined && forS === undefined) {
    out(line(await refreshForestImage({ force: true })));
    return 0;
  }
  const reports = await writeImagesFor({ forS: forS ?? 600, everyS: everyS ?? 5, say: (r) => out(line(r)) });
  out(`[berth image] ${reports.filter((r) => r.written).length} image(s) written in ${reports.length} round(s)`);
  return 0;
}
