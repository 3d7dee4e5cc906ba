import { Function as PFunction, Line, Location, Profile, Sample, StringTable, ValueType } from '../core/index.js';
import { ALLOC_SPACE } from './types.js';

/** The parts of the DevTools protocol's `HeapProfiler.SamplingHeapProfile` used here. */
export interface InspectorHeapNode {
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    /** 0-based. */
    readonly lineNumber: number;
    readonly columnNumber: number;
  };
  readonly selfSize: number;
  readonly children: readonly InspectorHeapNode[];
}

export interface InspectorHeapProfile {
  readonly head: InspectorHeapNode;
}

/** A frame's display name: V8's name, or where an anonymous function starts. */
export function frameName(functionName: string, line1: number): string {
  if (functionName !== '') return functionName;
  return line1 > 0 ? `(anonymous:L#${line1})` : '(anonymous)';
}

/** Script URL as pprof shows it: `file://` stripped, as @datadog/pprof does. */
export function scriptPath(url: string): string {
  return url.startsWith('file://') ? url.slice(7) : url;
}

/**
 * Convert an allocation-sampling profile from the inspector into a pprof
 * profile with `alloc_space/bytes`, one sample per allocating stack. Frames
 * are keyed like @datadog/pprof's serializer (name and script; location adds
 * the line) so stacks compare across profiles.
 *
 * No `alloc_objects`: the inspector reports each sample as the object size
 * times V8's unbiasing factor rounded to a whole count, and that product is
 * the same for many object sizes (at 512 KiB, 16- and 48-byte objects both
 * give 524304), so the object count cannot be recovered honestly.
 */
export function inspectorToPprof(source: InspectorHeapProfile, intervalBytes: number): Profile {
  const strings = new StringTable();
  const functions: PFunction[] = [];
  const locations: Location[] = [];
  const functionIds = new Map<string, number>();
  const locationIds = new Map<string, number>();

  const locationOf = (node: InspectorHeapNode): number => {
    const cf = node.callFrame;
    const line = cf.lineNumber + 1;
    const name = frameName(cf.functionName, line);
    const file = scriptPath(cf.url);
    const fkey = `${file}\u0000${name}`;
    let fid = functionIds.get(fkey);
    if (fid === undefined) {
      fid = functions.length + 1;
      const nameIdx = strings.dedup(name);
      functions.push(new PFunction({ id: fid, name: nameIdx, systemName: nameIdx, filename: strings.dedup(file) }));
      functionIds.set(fkey, fid);
    }
    const lkey = `${fid}:${line}`;
    let lid = locationIds.get(lkey);
    if (lid === undefined) {
      lid = locations.length + 1;
      locations.push(new Location({ id: lid, line: [new Line({ functionId: fid, line })] }));
      locationIds.set(lkey, lid);
    }
    return lid;
  };


  const samples: Sample[] = [];
  const stack: { node: InspectorHeapNode; path: number[] }[] = source.head.children.map((node) => ({ node, path: [] }));
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const path = [locationOf(entry.node), ...entry.path];
    // selfSize is the sum of the node's unbiased sample sizes.
    if (entry.node.selfSize > 0) {
      samples.push(new Sample({ locationId: path, value: [entry.node.selfSize] }));
    }
    for (const child of entry.node.children) stack.push({ node: child, path });
  }

  const spaceType = new ValueType({ type: strings.dedup(ALLOC_SPACE), unit: strings.dedup('bytes') });
  return new Profile({
    sampleType: [spaceType],
    sample: samples,
    location: locations,
    function: functions,
    stringTable: strings,
    periodType: spaceType,
    period: intervalBytes,
  });
}
