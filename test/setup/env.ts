process.env.LOG_LEVEL ??= 'warn';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
