// node-redlock on ioredis, on the same nodes and workloads as bench/macro_bench.cpp:
//   node bench.js <library> <workload> [nodes]
//   library:  v5 (@sesamecare-oss/redlock, the maintained v5 line) | v4 (redlock@4.2.0)
//   workload: latency (sequential uncontended acquire+release), throughput (64 concurrent
//             distinct keys, 2 s), contended (16 waiters on one key, 2 s), handoff (one
//             chain's back-to-back acquire+release for 2 s, then 16 waiters on one key for 2 s:
//             grants/s, the ratio, wait p50/p99 and per-waiter spread, as our
//             handoff_single_key benchmark)
//   library: v5, v4 (node-redlock), mutex, semaphore (redis-semaphore's RedlockMutex and
//            RedlockSemaphore with one permit; handoff only)
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
  if (library === 'mutex' || library === 'semaphore') {
    // Its own retry loop polls every retryInterval ms; 1 ms is its most eager setting.
    const { RedlockMutex, RedlockSemaphore } = require('redis-semaphore');
    const options = { lockTimeout: 30000, acquireTimeout: 10000,
      retryInterval: 1, refreshInterval: 0 };
    return {
      acquire: async (key) => {
        const m = library === 'mutex' ? new RedlockMutex(clients, key, options)
          : new RedlockSemaphore(clients, key, 1, options);
        await m.acquire();
        return m;
      },
      release: (m) => m.release(),
    };
  }
  throw new Error(`unknown library ${library} (v5, v4, mutex or semaphore)`);
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

async function handoff() {
  const once = makeLocker(0);
  for (let i = 0; i < 100; ++i) {
    await once.release(await once.acquire(`peer:warm:${i}`, 30000));
  }
  let base = 0;
  const baseStart = now(), baseUntil = baseStart + 2e6;
  while (now() < baseUntil) {
    await once.release(await once.acquire('peer:handoff:base', 30000));
    ++base;
  }
  const baseRate = base / ((now() - baseStart) / 1e6);
  const locker = makeLocker(1000000);
  const waits = [], perWaiter = new Array(16).fill(0);
  let failures = 0;
  const start = now(), until = start + 2e6;
  await Promise.all(perWaiter.map(async (_, w) => {
    while (now() < until) {
      const t0 = now();
      try {
        const lock = await locker.acquire('peer:handoff', 30000);
        waits.push(now() - t0);
        ++perWaiter[w];
        await locker.release(lock);
      } catch (e) {
        ++failures;
      }
    }
  }));
  const grants = perWaiter.reduce((a, b) => a + b, 0);
  const rate = grants / ((now() - start) / 1e6);
  waits.sort((a, b) => a - b);
  const squares = perWaiter.reduce((a, b) => a + b * b, 0);
  return { base_cycles_per_s: baseRate, grants_per_s: rate, ratio: rate / baseRate, failures,
    wait_p50_us: percentile(waits, 0.5), wait_p99_us: percentile(waits, 0.99),
    grants_least_waiter: Math.min(...perWaiter), grants_most_waiter: Math.max(...perWaiter),
    jain_fairness: squares ? grants * grants / (16 * squares) : 0 };
}

(async () => {
  let result;
  if (workload === 'latency') {
    result = await latency();
  } else if (workload === 'throughput') {
    const r = await loop(64, (c) => `peer:tp:${c}`, 0);
    result = { cycles_per_s: r.per_s, failures: r.failures };
  } else if (workload === 'handoff') {
    result = await handoff();
  } else if (workload === 'contended') {
    const r = await loop(16, () => 'peer:contended', 1000);
    result = { grants_per_s: r.per_s, failures: r.failures };
  } else {
    throw new Error(`unknown workload ${workload}`);
  }
  console.log(JSON.stringify({ library, workload, ...result }));
  clients.forEach((c) => c.disconnect());
})().catch((e) => { console.error(e); process.exit(1); });
