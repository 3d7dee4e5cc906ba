import { sampleTimes, sampleTimeUs } from '../core/pprof.js';
import type { Function as PprofFunction, Label, Line, Location, Mapping, Profile, Sample, ValueType } from '../core/pprof.js';
import { runSliced, runSync, staged, stepEvery, STEP_ENTRIES } from '../core/slices.js';
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
  // Indexed loops: this runs once per window, mostly in the interpreter,
  // where each step of a for-of allocates an iterator result (~1 MB of
  // garbage per 1,000-sample window, counting the labels).
  for (let i = 0; i < p.sampleType.length; i++) valueType(1, p.sampleType[i] as ValueType);
  const due = stepEvery(slice);
  const samples = p.sample;
  // Times kept beside the samples are written as each one's last label.
  const times = sampleTimes(p);
  const tsKey = times?.key ?? 0;
  for (let i = 0; i < samples.length; i++) {
    if (due()) yield;
    const s = samples[i] as Sample;
    w.fork(2);
    w.packedVarints(1, s.locationId);
    w.packedVarints(2, s.value);
    const labels = s.label;
    for (let j = 0; j < labels.length; j++) {
      const l = labels[j] as Label;
      w.fork(3);
      w.varint(1, l.key);
      w.varint(2, l.str);
      w.varint(3, l.num);
      w.varint(4, l.numUnit);
      w.join();
    }
    // Only the kept time (its label, if any, was written above), as ns
    // from µs without a BigInt: five of them per sample were most of what
    // a large window's encoding allocated.
    const us = sampleTimeUs(times, i);
    if (!Number.isNaN(us)) {
      w.fork(3);
      w.varint(1, tsKey);
      w.varintMicrosAsNanos(3, us);
      w.join();
    }
    w.join();
  }
  for (let i = 0; i < p.mapping.length; i++) {
    const m = p.mapping[i] as Mapping;
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
  const locations = p.location;
  for (let i = 0; i < locations.length; i++) {
    if (due()) yield;
    const loc = locations[i] as Location;
    w.fork(4);
    w.varint(1, loc.id);
    w.varint(2, loc.mappingId);
    w.varint(3, loc.address);
    for (let j = 0; j < loc.line.length; j++) {
      const line = loc.line[j] as Line;
      w.fork(4);
      w.varint(1, line.functionId);
      w.varint(2, line.line);
      w.varint(3, line.column);
      w.join();
    }
    if (loc.isFolded) w.bool(5, true);
    w.join();
  }
  const functions = p.function;
  for (let i = 0; i < functions.length; i++) {
    if (due()) yield;
    const f = functions[i] as PprofFunction;
    w.fork(5);
    w.varint(1, f.id);
    w.varint(2, f.name);
    w.varint(3, f.systemName);
    w.varint(4, f.filename);
    w.varint(5, f.startLine);
    w.join();
  }
  const strings = p.stringTable.strings;
  for (let i = 0; i < strings.length; i++) {
    if (due()) yield;
    w.string(6, strings[i] as string, true);
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
  return runSliced(staged('encode', pprofSteps(p, sliceSamples)));
}

/** Serialize in one go (for the synchronous exit path only). */
export function encodePprofSync(p: Profile): Uint8Array {
  return runSync(pprofSteps(p, Infinity));
}
