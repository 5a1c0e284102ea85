// node-redlock on ioredis, on the same nodes and workloads as bench/macro_bench.cpp:
//   node bench.js <library> <workload> [nodes]
//   library:  v5 (@sesamecare-oss/redlock, the maintained v5 line) | v4 (redlock@4.2.0)
//   workload: latency (sequential uncontended acquire+release), throughput (64 concurrent
//             distinct keys, 2 s), contended (16 waiters on one key, 2 s)
// Prints one JSON object. Loopback only; every loop is bounded in count or time.
'use strict';
const Redis = require('ioredis');

const [library, workload, nodeList] = process.argv.slice(2);
const nodes = (nodeList || process.env.REDLOCK_NODES ||
  '127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,127.0.0.1:7005').split(',');
const clients = nodes.map((n) => {
  const [host, port] = n.split(':');
  return new Redis({ host, port: Number(port), enableAutoPipelining: false, lazyConnect: false });
});

function makeLocker(retryCount) {
  if (library === 'v5') {
    const { Redlock } = require('@sesamecare-oss/redlock');
    const r = new Redlock(clients, { driftFactor: 0.01, retryCount, retryDelay: 1, retryJitter: 2,
      automaticExtensionThreshold: 500 });
    return { acquire: (key, ttl) => r.acquire([key], ttl), release: (lock) => lock.release() };
  }
  if (library === 'v4') {
    const Redlock = require('redlock');
    const r = new Redlock(clients, { driftFactor: 0.01, retryCount, retryDelay: 1, retryJitter: 2 });
    r.on('clientError', () => {});
    return { acquire: (key, ttl) => r.lock(key, ttl), release: (lock) => lock.unlock() };
  }
  throw new Error(`unknown library ${library} (v5 or v4)`);
}

const now = () => Number(process.hrtime.bigint()) / 1000; // microseconds
const percentile = (sorted, q) => sorted[Math.floor(q * (sorted.length - 1))];

async function latency() {
  const locker = makeLocker(0);
  for (let i = 0; i < 200; ++i) { // warm-up: connections, JIT
    await locker.release(await locker.acquire(`peer:warm:${i}`, 30000));
  }
  const acquire = [], cycle = [];
  for (let i = 0; i < 3000; ++i) {
    const t0 = now();
    const lock = await locker.acquire(`peer:seq:${i}`, 30000);
    const t1 = now();
    await locker.release(lock);
    const t2 = now();
    acquire.push(t1 - t0);
    cycle.push(t2 - t0);
  }
  acquire.sort((a, b) => a - b);
  cycle.sort((a, b) => a - b);
  if (process.env.REDLOCK_BENCH_SAMPLES) {
    require('fs').writeFileSync(`${process.env.REDLOCK_BENCH_SAMPLES}/node_redlock_${library}_acquire.txt`,
      acquire.join('\n') + '\n');
  }
  return { acquire_p50_us: percentile(acquire, 0.5), acquire_p99_us: percentile(acquire, 0.99),
    cycle_p50_us: percentile(cycle, 0.5), cycle_p99_us: percentile(cycle, 0.99) };
}

async function loop(chains, keyOf, retryCount) {
  const locker = makeLocker(retryCount);
  for (let i = 0; i < 100; ++i) {
    await locker.release(await locker.acquire(`peer:warm:${i}`, 30000));
  }
  let done = 0, failures = 0;
  const start = now(), until = start + 2e6;
  await Promise.all(Array.from({ length: chains }, async (_, c) => {
    while (now() < until) {
      try {
        const lock = await locker.acquire(keyOf(c), 30000);
        await locker.release(lock);
        ++done;
      } catch (e) {
        ++failures;
      }
    }
  }));
  return { per_s: done / ((now() - start) / 1e6), failures };
}

(async () => {
  let result;
  if (workload === 'latency') {
    result = await latency();
  } else if (workload === 'throughput') {
    const r = await loop(64, (c) => `peer:tp:${c}`, 0);
    result = { cycles_per_s: r.per_s, failures: r.failures };
  } else if (workload === 'contended') {
    const r = await loop(16, () => 'peer:contended', 1000);
    result = { grants_per_s: r.per_s, failures: r.failures };
  } else {
    throw new Error(`unknown workload ${workload}`);
  }
  console.log(JSON.stringify({ library, workload, ...result }));
  clients.forEach((c) => c.disconnect());
})().catch((e) => { console.error(e); process.exit(1); });
