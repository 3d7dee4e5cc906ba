/**
 * The control of record for every cost benchmark: the app traced by a bare
 * OpenTelemetry SDK (BasicTracerProvider, no span processor, and the stock
 * AsyncLocalStorage context manager), registered globally. Imported lazily
 * so a run that does not use it loads none of it.
 */
export async function registerOtelControl(): Promise<void> {
  const api = await import('@opentelemetry/api');
  const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const cm = new AsyncLocalStorageContextManager();
  cm.enable();
  api.context.setGlobalContextManager(cm);
  api.trace.setGlobalTracerProvider(new BasicTracerProvider());
}
