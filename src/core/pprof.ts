/**
 * pprof-format ships both a CommonJS and an ES build. @datadog/pprof (CJS)
 * builds its profiles from the CommonJS one, so everything in spanfuse uses
 * that same build: one set of classes at runtime, one set of types.
 */
import { createRequire } from 'node:module';
import type * as PprofFormat from 'pprof-format' with { 'resolution-mode': 'require' };

const require = createRequire(import.meta.url);
const pf = require('pprof-format') as typeof PprofFormat;

export const { Profile, Sample, Label, Location, Line, Function, Mapping, ValueType, StringTable } = pf;
export type Profile = PprofFormat.Profile;
export type Sample = PprofFormat.Sample;
export type Label = PprofFormat.Label;
export type Location = PprofFormat.Location;
export type Line = PprofFormat.Line;
export type Function = PprofFormat.Function;
export type Mapping = PprofFormat.Mapping;
export type ValueType = PprofFormat.ValueType;
export type StringTable = PprofFormat.StringTable;
