/** Whether this Node has `process.threadCpuUsage()` (Node >= 23.9). */
export const hasThreadCpu = typeof (process as { threadCpuUsage?: unknown }).threadCpuUsage === 'function';

/** CPU time of this thread (ms); the whole process's on Node < 23.9. */
export function threadCpuMs(): number {
  const u = hasThreadCpu
    ? (process as unknown as { threadCpuUsage(): NodeJS.CpuUsage }).threadCpuUsage()
    : process.cpuUsage();
  return (u.user + u.system) / 1000;
}
