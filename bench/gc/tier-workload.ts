/**
 * The workload of bench/gc/tier-survival.ts: four async loops; each
 * iteration makes one object of the chosen shape, keeps it across ~0.4 ms
 * of CPU and an `await`, and drops it, as a traced request does with its
 * span's context. Nothing outlives its iteration, so a scavenge should copy
 * almost nothing.
 *
 *   TW_SHAPE=closures   a constructor that gives each object three closures
 *                       and a Map (the shape of @opentelemetry/api's BaseContext)
 *   TW_SHAPE=prototype  the same object with its methods on the prototype
 *   TW_SHAPE=otel       a real OpenTelemetry Context (ROOT_CONTEXT.setValue)
 *   TW_MS               how long to run (default 6000)
 */
import { ROOT_CONTEXT, createContextKey } from '@opentelemetry/api';
import { cpuKernel, kernelIterationsFor } from '../overhead/work.js';

const shape = process.env['TW_SHAPE'] ?? 'closures';
const stopAt = Date.now() + Number(process.env['TW_MS'] ?? 6000);
const KEY = createContextKey('tier-survival');

class WithClosures {
  readonly map: Map<unknown, unknown>;
  readonly get: (k: unknown) => unknown;
  readonly with: (k: unknown, v: unknown) => WithClosures;
  readonly without: (k: unknown) => WithClosures;
  constructor(parent?: Map<unknown, unknown>) {
    const map = parent === undefined ? new Map<unknown, unknown>() : new Map(parent);
    this.map = map;
    this.get = (k) => map.get(k);
    this.with = (k, v) => {
      const c = new WithClosures(map);
      c.map.set(k, v);
      return c;
    };
    this.without = (k) => {
      const c = new WithClosures(map);
      c.map.delete(k);
      return c;
    };
  }
}

class WithPrototype {
  readonly map: Map<unknown, unknown>;
  constructor(parent?: Map<unknown, unknown>) {
    this.map = parent === undefined ? new Map<unknown, unknown>() : new Map(parent);
  }
  get(k: unknown): unknown {
    return this.map.get(k);
  }
  with(k: unknown, v: unknown): WithPrototype {
    const c = new WithPrototype(this.map);
    c.map.set(k, v);
    return c;
  }
}

const rootClosures = new WithClosures();
const rootPrototype = new WithPrototype();

/** One object of the chosen shape holding a small payload; `read` touches it after the await. */
function make(): { read: () => number } {
  const payload = { values: new Array<number>(50).fill(1) };
  if (shape === 'prototype') {
    const c = rootPrototype.with(KEY, payload);
    return { read: () => (c.get(KEY) as typeof payload).values.length };
  }
  if (shape === 'otel') {
    const c = ROOT_CONTEXT.setValue(KEY, payload);
    return { read: () => (c.getValue(KEY) as typeof payload).values.length };
  }
  const c = rootClosures.with(KEY, payload);
  return { read: () => (c.get(KEY) as typeof payload).values.length };
}

// ~0.2 ms of CPU on each side of the await.
const iterations = kernelIterationsFor(0.2);

let sink = 0;
async function loop(): Promise<void> {
  while (Date.now() < stopAt) {
    const o = make();
    sink ^= cpuKernel(iterations);
    await Promise.resolve();
    sink ^= cpuKernel(iterations);
    sink ^= o.read();
  }
}

await Promise.all([loop(), loop(), loop(), loop()]);
process.stdout.write(`${JSON.stringify({ shape, sink: sink & 1 })}\n`);
