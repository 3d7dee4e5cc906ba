import type { Attributes, HrTime, Link, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/**
 * An ended span with extra attributes. After `end()` the SDK ignores
 * `setAttribute`, and exporters only read the `ReadableSpan` interface, so a
 * held tail span is forwarded as this view: every field is the real span's
 * (an ended span no longer changes), `attributes` is the span's own merged
 * with the enrichment (the span's own win on a clash). No private field of
 * the SDK is touched.
 *
 * The added attributes bypass the SDK's attribute count limit; there are at
 * most a dozen and each is a number, a boolean, or a short string array.
 */
export class EnrichedSpan implements ReadableSpan {
  /** The span this view wraps. */
  readonly original: ReadableSpan;
  readonly attributes: Attributes;
  readonly name: string;
  readonly kind: SpanKind;
  readonly spanContext: () => SpanContext;
  readonly parentSpanContext?: SpanContext;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly status: SpanStatus;
  readonly links: Link[];
  readonly events: TimedEvent[];
  readonly duration: HrTime;
  readonly ended: boolean;
  readonly resource: ReadableSpan['resource'];
  readonly instrumentationScope: ReadableSpan['instrumentationScope'];
  readonly droppedAttributesCount: number;
  readonly droppedEventsCount: number;
  readonly droppedLinksCount: number;

  constructor(span: ReadableSpan, extra: Attributes) {
    this.original = span;
    this.attributes = { ...extra, ...span.attributes };
    this.name = span.name;
    this.kind = span.kind;
    this.spanContext = () => span.spanContext();
    if (span.parentSpanContext !== undefined) this.parentSpanContext = span.parentSpanContext;
    this.startTime = span.startTime;
    this.endTime = span.endTime;
    this.status = span.status;
    this.links = span.links;
    this.events = span.events;
    this.duration = span.duration;
    this.ended = span.ended;
    this.resource = span.resource;
    this.instrumentationScope = span.instrumentationScope;
    this.droppedAttributesCount = span.droppedAttributesCount;
    this.droppedEventsCount = span.droppedEventsCount;
    this.droppedLinksCount = span.droppedLinksCount;
  }
}
