import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  encodePerfAttr,
  PERF_ATTR_SIZE,
  PERF_FORMAT_GROUP,
  PERF_TYPE_HARDWARE,
  PERF_TYPE_SOFTWARE,
  PERF_TYPE_HW_CACHE,
  PerfGroup,
  HARDWARE_EVENTS,
  SOFTWARE_EVENTS,
  perfErrnoReason,
} from '../../src/runtime/index.js';
import { loadLibc } from '../../src/runtime/ffi.js';

const cases = [
  { type: PERF_TYPE_HARDWARE, config: 0, readFormat: PERF_FORMAT_GROUP | 3n, disabled: true, excludeKernel: true, excludeHv: true },
  { type: PERF_TYPE_SOFTWARE, config: 3, readFormat: 0n, disabled: false, excludeKernel: false, excludeHv: true },
  { type: PERF_TYPE_HW_CACHE, config: 0x10002, readFormat: PERF_FORMAT_GROUP, disabled: false, excludeKernel: false, excludeHv: false },
];

test('perf_event_attr fields sit at the kernel offsets (VER7, 128 bytes)', () => {
  const b = encodePerfAttr(cases[0]!);
  const dv = new DataView(b.buffer);
  assert.equal(b.length, PERF_ATTR_SIZE);
  assert.equal(dv.getUint32(0, true), PERF_TYPE_HARDWARE); // type
  assert.equal(dv.getUint32(4, true), 128); // size
  assert.equal(dv.getBigUint64(8, true), 0n); // config
  assert.equal(dv.getBigUint64(16, true), 0n); // sample_period: counting only
  assert.equal(dv.getBigUint64(24, true), 0n); // sample_type: nothing sampled
  assert.equal(dv.getBigUint64(32, true), 0b1011n); // read_format GROUP|TOTAL_TIME_RUNNING|ENABLED
  // flags: disabled (bit 0) | exclude_kernel (bit 5) | exclude_hv (bit 6); inherit (bit 1) never set
  assert.equal(dv.getBigUint64(40, true), 0b110_0001n);
  for (let i = 48; i < 128; i++) assert.equal(b[i], 0, `byte ${i}`);
  const sw = new DataView(encodePerfAttr(cases[1]!).buffer);
  assert.equal(sw.getBigUint64(8, true), 3n);
  assert.equal(sw.getBigUint64(40, true) & 2n, 0n, 'inherit must stay 0');
});

// The same attrs built by the C compiler from linux/perf_event.h, byte for byte.
const header = '/usr/include/linux/perf_event.h';
const haveCc = existsSync(header) && existsSync('/usr/bin/cc');
test('perf_event_attr encoding equals the C struct from linux/perf_event.h', { skip: !haveCc && 'no cc or kernel headers' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'spanfuse-perfattr-'));
  try {
    const inits = cases
      .map(
        (c) => `{ struct perf_event_attr a; memset(&a, 0, sizeof a); a.type = ${c.type}; a.size = PERF_ATTR_SIZE_VER7;
          a.config = ${c.config}ULL; a.read_format = ${c.readFormat}ULL; a.disabled = ${Number(c.disabled)};
          a.exclude_kernel = ${Number(c.excludeKernel)}; a.exclude_hv = ${Number(c.excludeHv)}; a.inherit = 0;
          dump(&a); }`,
      )
      .join('\n');
    const src = `#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
static void dump(const struct perf_event_attr *a) {
  const unsigned char *p = (const unsigned char *)a;
  for (int i = 0; i < PERF_ATTR_SIZE_VER7; i++) printf("%02x", p[i]);
  printf("\\n");
}
int main(void) { ${inits} return 0; }`;
    writeFileSync(join(dir, 'a.c'), src);
    execFileSync('/usr/bin/cc', ['-o', join(dir, 'a'), join(dir, 'a.c')]);
    const lines = execFileSync(join(dir, 'a'), { encoding: 'utf8' }).trim().split('\n');
    assert.equal(lines.length, cases.length);
    cases.forEach((c, i) => assert.equal(Buffer.from(encodePerfAttr(c)).toString('hex'), lines[i]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const libc = loadLibc();
test('software perf counters are monotone; hardware ones are absent with a reason, never zero', { skip: !libc.ok }, () => {
  const hw = PerfGroup.open(HARDWARE_EVENTS);
  if (hw.group === undefined) {
    for (const e of HARDWARE_EVENTS) {
      const reason = hw.unsupported[e.name];
      assert.ok(reason !== undefined && /^(ENOENT|ENODEV|EOPNOTSUPP|EACCES|EPERM|EINVAL)/.test(reason), `${e.name}: ${reason}`);
    }
  } else {
    // A machine with a PMU: the counters read and grow.
    const a = new Float64Array(hw.group.names.length);
    assert.ok(hw.group.read(a));
    hw.group.close();
  }
  const sw = PerfGroup.open(SOFTWARE_EVENTS);
  if (sw.group === undefined) {
    // perf events forbidden here: every software counter says why.
    for (const e of SOFTWARE_EVENTS) assert.ok(sw.unsupported[e.name]);
    return;
  }
  const a = new Float64Array(sw.group.names.length);
  const b = new Float64Array(sw.group.names.length);
  assert.ok(sw.group.read(a));
  let x = 0;
  for (let i = 0; i < 2e6; i++) x += i;
  assert.ok(x > 0);
  assert.ok(sw.group.read(b));
  for (let i = 0; i < a.length; i++) assert.ok((b[i] ?? 0) >= (a[i] ?? 0), sw.group.names[i]);
  const clock = sw.group.names.indexOf('perf.task_clock_ns');
  if (clock >= 0) assert.ok((b[clock] ?? 0) > (a[clock] ?? 0), 'task clock advances while burning');
  sw.group.close();
});

test('errno reasons name the cause', () => {
  assert.equal(perfErrnoReason(2, false), 'ENOENT: no hardware PMU');
  assert.match(perfErrnoReason(13, true), /^EACCES: perf events not permitted/);
  assert.match(perfErrnoReason(1, true), /^EPERM/);
});
