import type { Profile, ValueType } from '../core/pprof.js';
import { runSliced, runSync, stepEvery, STEP_ENTRIES } from '../core/slices.js';
import type { Steps } from '../core/slices.js';
import { ProtoWriter } from './otlp/proto-writer.js';

/**
 * Serializes a pprof-format Profile (perftools.profiles.Profile) with our
 * protobuf writer, as a generator that yields every `slice` entries:
 * pprof-format's own encodeAsync does the samples in one synchronous pass,
 * which blocks the event loop for hundreds of milliseconds on a large window.
 */
export function* pprofSteps(p: Profile, slice: number): Steps<Uint8Array> {
  const w = new ProtoWriter(Math.max(64 * 1024, p.sample.length * 64));
  const valueType = (field: number, v: ValueType): void => {
    w.fork(field);
    w.varint(1, v.type);
    w.varint(2, v.unit);
    w.join();
  };
  for (const st of p.sampleType) valueType(1, st);
  const due = stepEvery(slice);
  for (const s of p.sample) {
    if (due()) yield;
    w.fork(2);
    w.packedVarints(1, s.locationId);
    w.packedVarints(2, s.value);
    for (const l of s.label) {
      w.fork(3);
      w.varint(1, l.key);
      w.varint(2, l.str);
      w.varint(3, l.num);
      w.varint(4, l.numUnit);
      w.join();
    }
    w.join();
  }
  for (const m of p.mapping) {
    w.fork(3);
    w.varint(1, m.id);
    w.varint(2, m.memoryStart);
    w.varint(3, m.memoryLimit);
    w.varint(4, m.fileOffset);
    w.varint(5, m.filename);
    w.varint(6, m.buildId);
    if (m.hasFunctions) w.bool(7, true);
    if (m.hasFilenames) w.bool(8, true);
    if (m.hasLineNumbers) w.bool(9, true);
    if (m.hasInlineFrames) w.bool(10, true);
    w.join();
  }
  for (const loc of p.location) {
    if (due()) yield;
    w.fork(4);
    w.varint(1, loc.id);
    w.varint(2, loc.mappingId);
    w.varint(3, loc.address);
    for (const line of loc.line) {
      w.fork(4);
      w.varint(1, line.functionId);
      w.varint(2, line.line);
      w.varint(3, line.column);
      w.join();
    }
    if (loc.isFolded) w.bool(5, true);
    w.join();
  }
  for (const f of p.function) {
    if (due()) yield;
    w.fork(5);
    w.varint(1, f.id);
    w.varint(2, f.name);
    w.varint(3, f.systemName);
    w.varint(4, f.filename);
    w.varint(5, f.startLine);
    w.join();
  }
  for (const s of p.stringTable.strings) {
    if (due()) yield;
    w.string(6, s, true);
  }
  w.varint(7, p.dropFrames);
  w.varint(8, p.keepFrames);
  w.varint(9, p.timeNanos);
  w.varint(10, p.durationNanos);
  if (p.periodType) valueType(11, p.periodType);
  w.varint(12, p.period);
  w.packedVarints(13, p.comment);
  w.varint(14, p.defaultSampleType);
  w.varint(15, p.docUrl);
  return w.finish();
}

/**
 * Serialize in steps of `sliceSamples` samples (locations, functions,
 * strings), run a couple of milliseconds at a time with an event-loop turn
 * between them.
 */
export function encodePprof(p: Profile, sliceSamples = STEP_ENTRIES): Promise<Uint8Array> {
  return runSliced(pprofSteps(p, sliceSamples));
}

/** Serialize in one go (for the synchronous exit path only). */
export function encodePprofSync(p: Profile): Uint8Array {
  return runSync(pprofSteps(p, Infinity));
}
