// Where the machine's cores go during a run: CPU time (utime + stime of /proc/<pid>/stat) of the service
// processes, of the PostgreSQL backends serving the run's database (other databases on the same server,
// and the server's shared background processes such as the WAL writer, are not counted), and of the bench
// process itself (the receiver). Linux only, PostgreSQL on this machine only; a figure that cannot be
// read is undefined.
import { readFileSync } from 'node:fs';
import type pg from 'pg';

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux this runs on

/** CPU milliseconds used so far by one process; undefined once it has gone. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces) start after the last ')'; utime and stime are the
    // 14th and 15th fields of the line, the 12th and 13th after the command.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The pids of the backends connected to the pool's database now. */
export async function backendPids(pool: pg.Pool): Promise<number[]> {
  const result = await pool.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
  );
  return result.rows.map((row) => row.pid);
}

/** CPU milliseconds of this process (the bench: receiver, publisher, polling). */
export function selfCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

export interface CpuSnapshot {
  workers: Array<number | undefined>;
  /** CPU milliseconds by backend pid. */
  backends: Map<number, number>;
  bench: number;
}

export async function cpuSnapshot(workerPids: readonly number[], pool: pg.Pool): Promise<CpuSnapshot> {
  const backends = new Map<number, number>();
  for (const pid of await backendPids(pool)) {
    const ms = processCpuMs(pid);
    if (ms !== undefined) backends.set(pid, ms);
  }
  return { workers: workerPids.map(processCpuMs), backends, bench: selfCpuMs() };
}

/**
 * CPU milliseconds per item between two snapshots: workers summed, the database's backends (a backend
 * that appeared in between counts from zero; one that went away in between is missed, so the pools'
 * idle timeout must exceed the run), the bench process.
 */
export function cpuPerItem(
  before: CpuSnapshot,
  after: CpuSnapshot,
  items: number,
): { workersMs?: number; postgresMs?: number; benchMs: number } {
  const per = (ms: number) => Math.round((ms / items) * 1000) / 1000;
  const workerDeltas = after.workers.map((ms, index) =>
    ms === undefined || before.workers[index] === undefined ? undefined : ms - before.workers[index]!,
  );
  const result: { workersMs?: number; postgresMs?: number; benchMs: number } = {
    benchMs: per(after.bench - before.bench),
  };
  if (workerDeltas.every((delta) => delta !== undefined)) {
    result.workersMs = per(workerDeltas.reduce((sum, delta) => sum + delta!, 0));
  }
  if (after.backends.size > 0) {
    let backends = 0;
    for (const [pid, ms] of after.backends) backends += ms - (before.backends.get(pid) ?? 0);
    result.postgresMs = per(backends);
  }
  return result;
}

interface MachineSample {
  /** performance.now() of the bench process. */
  at: number;
  /** CPU milliseconds all cores spent not idle since boot (user, nice, system, irq, softirq, steal). */
  busyMs: number;
  /** Cores counted in that figure. */
  cores: number;
}

function readMachineSample(): MachineSample | undefined {
  try {
    // First line of /proc/stat: "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (ticks).
    const lines = readFileSync('/proc/stat', 'utf8').split('\n');
    const fields = lines[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = fields;
    const busy = user! + nice! + system! + irq! + softirq! + steal!;
    const cores = lines.filter((line) => /^cpu\d+ /.test(line)).length;
    return { at: performance.now(), busyMs: (busy * 1000) / TICKS_PER_SECOND, cores };
  } catch {
    return undefined;
  }
}

export interface MachineCpuSampler {
  /**
   * Busy CPU milliseconds of the whole machine (every process, the kernel's network work included) per item
   * over the window [from, to] (performance.now() ms), and the share of all cores that was busy then.
   * Undefined where /proc/stat is unreadable or the window held fewer than two samples.
   */
  perItem(
    from: number,
    to: number,
    items: number,
  ): { ms: number; busyPercent: number; cores: number } | undefined;
  stop(): void;
}

/**
 * Samples /proc/stat every `intervalMs` so that the machine's CPU can be read over a window known only
 * afterwards (the receiver's first arrival to last acknowledgement). Both delivery-limit and
 * delivery-throughput are bound by these cores once they are all busy, so the ratio of their machine CPU per
 * request is what the ratio of their rates tends to.
 */
export function sampleMachineCpu(intervalMs = 50): MachineCpuSampler {
  const samples: MachineSample[] = [];
  const take = () => {
    const sample = readMachineSample();
    if (sample) samples.push(sample);
  };
  take();
  const timer = setInterval(take, intervalMs);
  let stopped = false;
  return {
    perItem(from, to, items) {
      const inside = samples.filter((sample) => sample.at >= from && sample.at <= to);
      const first = inside[0];
      const last = inside.at(-1);
      if (!first || !last || last.at - first.at <= 0 || items <= 0) return undefined;
      const busyPerMs = (last.busyMs - first.busyMs) / (last.at - first.at);
      return {
        ms: Math.round(((busyPerMs * (to - from)) / items) * 1000) / 1000,
        busyPercent: Math.round((busyPerMs / last.cores) * 100),
        cores: last.cores,
      };
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      take();
    },
  };
}

/**
 * CPU milliseconds per item of each process of a snapshot taken with `cpuSnapshot(pids, pool)`, by the
 * name given to its pid, plus the database's backends and the bench process: where each item's cost goes.
 */
export function cpuPerItemByProcess(
  before: CpuSnapshot,
  after: CpuSnapshot,
  items: number,
  names: readonly string[],
): Record<string, number | undefined> {
  const result: Record<string, number | undefined> = {};
  names.forEach((name, index) => {
    result[name] = cpuPerItem(
      { ...before, workers: [before.workers[index]] },
      { ...after, workers: [after.workers[index]] },
      items,
    ).workersMs;
  });
  const shared = cpuPerItem(before, after, items);
  result.postgres = shared.postgresMs;
  result.bench = shared.benchMs;
  return result;
}
