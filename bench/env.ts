// Imported first by bench/run.ts: quiet logs and no EMF metric lines while measuring
// (scenario modules import handler code, which reads these when first loaded).
process.env.LOG_LEVEL ??= 'warn';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
