#!/usr/bin/env python3
"""Where the CPU of a profiled process goes, by category, from `perf record -g` data.

Usage: categories.py PERF_DATA [REQUESTS [DETAIL_ROWS]]

Each main-thread sample is put in one category: GC or JIT compilation or the
sampler's native code if such a frame is anywhere on its stack, else the owner of
the innermost JavaScript frame (spanfuse, OpenTelemetry, the bench app, Node core,
@datadog/pprof), else native code with no JS. Other threads count by name.
Needs `node --perf-basic-prof` for JS frame names. With REQUESTS, each category
is also shown as microseconds per request (samples taken at 999 Hz).
See docs/benchmark.md, "profile of the profiler".
"""
import sys,subprocess,collections,re
data=sys.argv[1]
out=subprocess.run(['perf','script','-i',data,'-F','comm,tid,ip,sym,dso'],capture_output=True,text=True).stdout
cats=collections.Counter(); detail=collections.defaultdict(collections.Counter)
def owner(sym):
    if 'dist/src/' in sym: return 'spanfuse-js'
    if '@opentelemetry' in sym: return 'otel-js'
    if 'bench/overhead' in sym: return 'app-js'
    if 'node:' in sym: return 'node-core-js'
    if '@datadog' in sym: return 'pprof-js'
    return 'other-js'
def classify(comm,frames):
    if comm not in ('node','MainThread'): return 'thread:'+comm, comm
    syms=[f[0] for f in frames]
    leaf=syms[0] if syms else '?'
    j=' | '.join(syms)
    if re.search(r'Scavenger|Heap::|MarkCompact|GCTracer|ScavengeJob|Sweeper|ConcurrentMarking|MinorMarkCompact',j): return 'gc', leaf[:90]
    if re.search(r'v8::internal::compiler|maglev|Maglev|OptimizingCompile|Compiler::',j): return 'jit-compile', leaf[:90]
    if re.search(r'dd_pprof|CpuProfiler|ProfilerListener|CodeEventDispatcher|WallProfiler',j): return 'profiler-native', leaf[:90]
    for s in syms:
        if s.startswith(('JS:','LazyCompile:','Function:','Script:')) or 'file://' in s:
            return owner(s), s.split(' ')[0][:70]+' <- '+leaf[:50]
    return 'native-no-js', leaf[:90]
comm=None; frames=[]
def flush():
    if comm is None: return
    c,d=classify(comm,frames); cats[c]+=1; detail[c][d]+=1
for line in out.splitlines():
    if not line.strip():
        flush(); comm=None; frames=[]; continue
    if comm is None:
        # The sample's header: the thread name (it may hold spaces), then its tid.
        m=re.match(r'^(.*?)\s+\d+\s',line)
        comm=m.group(1).strip() if m else line.split()[0]; continue
    parts=line.strip().split(' ',1)
    if len(parts)==2:
        rest=parts[1]; m=re.match(r'(.*) \((.*)\)$',rest)
        frames.append((m.group(1),m.group(2)) if m else (rest,''))
flush()
tot=sum(cats.values()); req=float(sys.argv[2]) if len(sys.argv)>2 else None
print('samples',tot)
for c,n in cats.most_common():
    extra=' %.1f us/req'%(n*1e6/999/req) if req else ''
    print('  %-22s %6d %5.1f%%%s'%(c,n,100*n/tot,extra))
    for d,k in detail[c].most_common(int(sys.argv[3]) if len(sys.argv)>3 else 4): print('       %6d %s'%(k,d))
