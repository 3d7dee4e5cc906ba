import { Function as PFunction, Line, Location, Profile, Sample, StringTable, ValueType } from 'pprof-format';
import { LABEL_THREAD_ID, LABEL_THREAD_NAME } from '../core/labels.js';
import type { Arch } from './platform.js';
import type { StateSnapshot } from './state-reader.js';
import { NR_NOT_IN_SYSCALL, NR_NOT_SCHEDULED, NR_SHORT_WAITS, NR_UNOBSERVED, REASON_OVERFLOW, decodeReasonKey } from './state-table.js';
import { syscallName } from './syscalls.js';

/** Label with the wait reason (syscall name) on every off-CPU sample. */
export const LABEL_WAIT_REASON = 'wait.reason';

export interface OffCpuInput {
  readonly previous: StateSnapshot;
  readonly current: StateSnapshot;
  readonly arch: Arch | undefined;
  readonly threadName: (tid: number) => string;
  readonly wchanName: (id: number) => string | undefined;
  readonly startUnixNs: bigint;
  readonly endUnixNs: bigint;
  readonly intervalNs: number;
}

/**
 * The off-CPU pprof profile of one window: per thread and wait reason, the
 * time the sampler saw the thread blocked. Each sample's stack is synthetic:
 * leaf = kernel wait function (`wchan`, e.g. `futex_do_wait`) when known,
 * parent = the syscall (e.g. `futex`, `epoll_pwait`, `read`).
 * Returns undefined when nothing was off-CPU.
 */
export function buildOffCpuProfile(input: OffCpuInput): Profile | undefined {
  const strings = new StringTable();
  const functions: PFunction[] = [];
  const locations: Location[] = [];
  const locByName = new Map<string, number>();
  const location = (name: string): number => {
    let id = locByName.get(name);
    if (id === undefined) {
      id = locations.length + 1;
      const nameIdx = strings.dedup(name);
      functions.push(new PFunction({ id, name: nameIdx, systemName: nameIdx }));
      locations.push(new Location({ id, line: [new Line({ functionId: id })] }));
      locByName.set(name, id);
    }
    return id;
  };
  const samples: Sample[] = [];
  const keyTid = strings.dedup(LABEL_THREAD_ID);
  const keyName = strings.dedup(LABEL_THREAD_NAME);
  const keyReason = strings.dedup(LABEL_WAIT_REASON);
  for (const [tid, cur] of input.current) {
    const prev = input.previous.get(tid);
    for (const [key, ns] of cur.reasons) {
      const delta = Math.round(ns - (prev?.reasons.get(key) ?? 0));
      if (delta <= 0) continue;
      let syscall: string;
      let wchan: string | undefined;
      if (key === REASON_OVERFLOW) syscall = 'other';
      else {
        const r = decodeReasonKey(key);
        syscall =
          r.syscallNr === NR_NOT_IN_SYSCALL
            ? 'not_in_syscall'
            : r.syscallNr === NR_SHORT_WAITS
              ? 'short_waits'
              : r.syscallNr === NR_NOT_SCHEDULED
                ? 'not_scheduled'
                : r.syscallNr === NR_UNOBSERVED
                  ? 'unobserved'
                  : syscallName(input.arch, r.syscallNr);
        wchan = input.wchanName(r.wchanId);
      }
      const stack = wchan !== undefined && wchan !== syscall ? [location(wchan), location(syscall)] : [location(syscall)];
      samples.push(
        new Sample({
          locationId: stack,
          value: [delta],
          label: [
            { key: keyTid, str: strings.dedup(String(tid)) },
            { key: keyName, str: strings.dedup(input.threadName(tid)) },
            { key: keyReason, str: strings.dedup(syscall) },
          ],
        }),
      );
    }
  }
  if (samples.length === 0) return undefined;
  const offCpu = new ValueType({ type: strings.dedup('off_cpu'), unit: strings.dedup('nanoseconds') });
  return new Profile({
    sampleType: [offCpu],
    sample: samples,
    location: locations,
    function: functions,
    stringTable: strings,
    timeNanos: input.startUnixNs,
    durationNanos: input.endUnixNs - input.startUnixNs,
    periodType: new ValueType({ type: offCpu.type, unit: offCpu.unit }),
    period: input.intervalNs,
  });
}
