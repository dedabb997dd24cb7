import module from 'node:module';

/**
 * Process entry point. Node's compile cache (under the OS temp directory, or
 * NODE_COMPILE_CACHE) keeps the compiled modules between starts: a warm start takes about
 * half the time of a cold one. It must be on before the bot's modules load, hence the
 * dynamic import.
 */
module.enableCompileCache?.();
await import('./app/start.ts');
