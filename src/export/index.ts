export { ExportPipeline } from './pipeline.js';
export type { ExportPipelineOptions, ExportPipelineStats, ExporterCounters } from './pipeline.js';
export { FileExporter } from './file-exporter.js';
export type { FileExporterOptions, FileFormat } from './file-exporter.js';
export { windowFileName, parseWindowFileName } from './file-names.js';
export type { FileKind } from './file-names.js';
export { Lane } from './lane.js';
export type { LaneLimits } from './lane.js';
export type { ExportOutcome, ProfileExporter, WindowScrubber } from './types.js';
