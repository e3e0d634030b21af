/**
 * The catalogue the harness generates: 20 benchmarks (CPU, GPU, storage and network), each with its
 * own JSON Schema (draft 2020-12) and a generator of result documents that satisfy it, plus the
 * names of sites, flavors and tags. Result documents are 1-3 KB of nested JSON, shaped like what the
 * benchmark containers of peer services upload.
 */
import type { Rng } from './random.ts';

export type Category = 'cpu' | 'gpu' | 'storage' | 'network';

/** What a flavor offers; results run on it describe the machine accordingly. */
export interface FlavorSpec {
  vcpus: number;
  ramGb: number;
  cpuBrand: string;
  ghz: number;
  gpu: { model: string; memoryGb: number; count: number } | null;
  disk: { kind: 'nvme' | 'ssd' | 'ceph-rbd' | 'hdd'; sizeGb: number };
  networkGbps: number;
}

/** Everything a result generator may depend on. */
export interface ResultContext {
  rng: Rng;
  flavor: FlavorSpec;
  siteIndex: number;
  /** 0..1 across the two years: software gets a little faster with time. */
  age: number;
}

export interface BenchmarkDef {
  key: string;
  category: Category;
  image: string;
  tag: string;
  description: string;
  url: string;
  units: string;
  /** Relative popularity: how many results it gets. */
  weight: number;
  /** The dotted path of its headline metric (a number), used by the JSON filter and sort scenario. */
  metric: string;
  /** Command line recorded in the result. */
  args: string;
  /** JSON Schema of the `result` object. */
  resultSchema: Record<string, unknown>;
  /** JSON Schemas of extra top-level objects (gpu, disk, network). */
  extraSchema?: Record<string, Record<string, unknown>>;
  result(ctx: ResultContext): Record<string, unknown>;
  extra?(ctx: ResultContext): Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Schema pieces

const num = (minimum = 0, extra: Record<string, unknown> = {}) => ({ type: 'number', minimum, ...extra });
const int = (minimum = 0, extra: Record<string, unknown> = {}) => ({ type: 'integer', minimum, ...extra });
const str = (extra: Record<string, unknown> = {}) => ({ type: 'string', ...extra });
const obj = (properties: Record<string, unknown>, required: string[] = Object.keys(properties), extra: Record<string, unknown> = {}) => ({
  type: 'object',
  required,
  properties,
  ...extra,
});
const arr = (items: Record<string, unknown>, minItems = 1, maxItems?: number) => ({
  type: 'array',
  items,
  minItems,
  ...(maxItems ? { maxItems } : {}),
});

const MACHINE_SCHEMA = obj(
  {
    cpu: obj(
      {
        arch: str({ enum: ['X86_64', 'ARM_8'], suggestToUser: true }),
        bits: int(32),
        brand_raw: str({ suggestToUser: true }),
        count: int(1, { suggestToUser: true }),
        hz_actual_friendly: str({ pattern: '^[0-9.]+ GHz$' }),
        l2_cache_size: str(),
        flags: arr(str({ pattern: '^[a-z0-9_]+$' }), 0),
      },
      ['arch', 'bits', 'brand_raw', 'count'],
    ),
    memory: obj({ total_mb: int(1), available_mb: int(0), swap_mb: int(0) }, ['total_mb']),
    os: obj({ system: str({ const: 'Linux' }), release: str(), distro: str(), python: str() }, ['system', 'release']),
    virtualization: obj({ hypervisor: str(), cpu_model: str() }, ['hypervisor']),
  },
  ['cpu', 'memory', 'os'],
);

const ENVIRONMENT_SCHEMA = obj(
  {
    runtime: str(),
    image_digest: str({ pattern: '^sha256:[0-9a-f]{64}$' }),
    started_by: str(),
    hostname: str(),
    timezone: str(),
    duration_s: num(0),
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    packages: { type: 'object', additionalProperties: { type: 'string', pattern: '^[0-9][0-9a-z.+~-]*$' } },
  },
  ['runtime', 'image_digest', 'duration_s'],
);

/** The full JSON Schema of a benchmark's results. */
export function benchmarkSchema(def: BenchmarkDef): Record<string, unknown> {
  const extras = def.extraSchema ?? {};
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `https://benchmarks.example.org/schemas/${def.key}-${def.tag}.json`,
    title: `${def.key} ${def.tag} result`,
    description: def.description,
    type: 'object',
    required: ['test', 'version', 'units', 'arguments', 'machine', 'environment', 'result', ...Object.keys(extras)],
    properties: {
      test: { const: def.key },
      version: { type: 'string', const: def.tag },
      units: { const: def.units },
      arguments: { type: 'string' },
      machine: { $ref: '#/$defs/machine' },
      environment: { $ref: '#/$defs/environment' },
      result: def.resultSchema,
      ...extras,
    },
    $defs: { machine: MACHINE_SCHEMA, environment: ENVIRONMENT_SCHEMA },
  };
}

// ---------------------------------------------------------------------------------------------
// Shared document parts

const CPU_FLAGS = (
  'fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx ' +
  'pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 ' +
  'sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch ' +
  'cpuid_fault invpcid_single ssbd ibrs ibpb stibp ibrs_enhanced fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms ' +
  'invpcid rtm avx512f avx512dq rdseed adx smap clflushopt clwb avx512cd avx512bw avx512vl xsaveopt xsavec xgetbv1 ' +
  'xsaves arat umip pku ospke avx512_vnni md_clear arch_capabilities'
).split(' ');

const KERNELS = '5.15.0-105-generic 5.15.0-119-generic 6.1.0-18-amd64 6.5.0-35-generic 6.8.0-45-generic 4.18.0-513.el8.x86_64'.split(' ');
const DISTROS = 'Ubuntu 22.04.4 LTS|Ubuntu 24.04.1 LTS|Debian GNU/Linux 12 (bookworm)|Rocky Linux 8.9 (Green Obsidian)|AlmaLinux 9.4'.split(
  '|',
);
const RUNTIMES = ['docker 24.0.7', 'docker 26.1.3', 'podman 4.9.4', 'apptainer 1.3.1'];
const PACKAGES: [string, string[]][] = [
  ['glibc', ['2.31', '2.35', '2.36', '2.39']],
  ['gcc', ['9.4.0', '11.4.0', '12.2.0', '13.2.0']],
  ['openmpi', ['4.1.2', '4.1.5', '5.0.3']],
  ['openblas', ['0.3.20', '0.3.21', '0.3.26']],
  ['python3', ['3.10.12', '3.11.2', '3.12.3']],
  ['numpy', ['1.24.4', '1.26.4', '2.0.1']],
  ['libaio1', ['0.3.112-13', '0.3.113-5']],
  ['openssl', ['3.0.2', '3.0.13', '3.2.1']],
  ['zlib1g', ['1.2.11.dfsg-2', '1.2.13.dfsg-1', '1.3.dfsg-3']],
  ['linux-tools', ['5.15.0-105', '6.1.0-18', '6.8.0-45']],
];
const CLIS = ['benchmarks-cli 1.4.2', 'benchmarks-cli 1.5.0', 'benchmarks-cli 1.5.1'];

function machine(ctx: ResultContext): Record<string, unknown> {
  const { rng, flavor } = ctx;
  const arm = flavor.cpuBrand.startsWith('Ampere');
  const flagCount = rng.int(35, CPU_FLAGS.length);
  const totalMb = flavor.ramGb * 1024 - rng.int(200, 600);
  return {
    cpu: {
      arch: arm ? 'ARM_8' : 'X86_64',
      bits: 64,
      brand_raw: flavor.cpuBrand,
      count: flavor.vcpus,
      hz_actual_friendly: `${(flavor.ghz * rng.float(0.97, 1.03)).toFixed(4)} GHz`,
      l2_cache_size: `${flavor.vcpus * (arm ? 1 : 2)} MiB`,
      flags: arm
        ? ['fp', 'asimd', 'evtstrm', 'aes', 'pmull', 'sha1', 'sha2', 'crc32', 'atomics', 'fphp', 'asimdhp', 'cpuid']
        : CPU_FLAGS.slice(0, flagCount),
    },
    memory: { total_mb: totalMb, available_mb: Math.round(totalMb * rng.float(0.6, 0.95)), swap_mb: rng.chance(0.3) ? 2048 : 0 },
    os: { system: 'Linux', release: rng.pick(KERNELS), distro: rng.pick(DISTROS), python: rng.pick(['3.10.12', '3.11.2', '3.12.3']) },
    virtualization: {
      hypervisor: rng.pick(['KVM', 'KVM', 'KVM', 'VMware']),
      cpu_model: rng.pick(['host-passthrough', 'host-model', 'EPYC-Rome', 'Cascadelake-Server']),
    },
  };
}

function environment(ctx: ResultContext, durationS: number): Record<string, unknown> {
  const { rng } = ctx;
  const labels: Record<string, string> = {};
  const n = rng.int(0, 4);
  for (let i = 0; i < n; i++)
    labels[rng.pick(['project', 'campaign', 'owner', 'ci_job', 'region', 'queue'])] =
      `${rng.pick(['eosc', 'ai4eu', 'tier2', 'nightly', 'qa', 'hpc'])}-${rng.int(1, 999)}`;
  return {
    runtime: rng.pick(RUNTIMES),
    image_digest: `sha256:${rng.hex(64)}`,
    started_by: rng.pick(CLIS),
    hostname: `vm-${rng.hex(8)}.site${ctx.siteIndex}.cloud`,
    timezone: 'UTC',
    duration_s: rng.round(durationS, 1),
    labels,
    packages: Object.fromEntries(rng.sample(PACKAGES, rng.int(3, PACKAGES.length)).map(([name, versions]) => [name, rng.pick(versions)])),
  };
}

/** A few runs around `value`. */
function runs(rng: Rng, value: number, n: number, spread = 0.03, digits = 2): number[] {
  return Array.from({ length: n }, () => rng.round(value * rng.noise(spread), digits));
}

const speed = (ctx: ResultContext) => (ctx.flavor.ghz / 2.5) * (1 + ctx.age * 0.05);

// ---------------------------------------------------------------------------------------------
// The 20 benchmarks

const GPU_SCHEMA = {
  gpu: obj({
    name: str({ suggestToUser: true }),
    count: int(1),
    memory_mb: int(1),
    driver: str(),
    cuda_version: str(),
    temperature_c: arr(num(0), 1),
  }),
};
function gpuBlock(ctx: ResultContext): Record<string, unknown> {
  const { rng, flavor } = ctx;
  const g = flavor.gpu ?? { model: 'NVIDIA T4', memoryGb: 16, count: 1 };
  return {
    gpu: {
      name: g.model,
      count: g.count,
      memory_mb: g.memoryGb * 1024,
      driver: rng.pick(['535.161.08', '550.54.15', '550.90.07']),
      cuda_version: rng.pick(['12.2', '12.4', '12.5']),
      temperature_c: runs(rng, 65, rng.int(3, 8), 0.08, 0),
    },
  };
}
const gpuPower = (ctx: ResultContext) => {
  const g = ctx.flavor.gpu;
  const base = !g
    ? 1
    : g.model.includes('H100')
      ? 6
      : g.model.includes('A100')
        ? 4
        : g.model.includes('V100')
          ? 2.2
          : g.model.includes('L4')
            ? 1.4
            : 1;
  return base * (g?.count ?? 1);
};

const DISK_SCHEMA = {
  disk: obj({
    kind: str({ enum: ['nvme', 'ssd', 'ceph-rbd', 'hdd'], suggestToUser: true }),
    size_gb: int(1),
    filesystem: str(),
    mount: str(),
    scheduler: str(),
  }),
};
function diskBlock(ctx: ResultContext): Record<string, unknown> {
  const { rng, flavor } = ctx;
  return {
    disk: {
      kind: flavor.disk.kind,
      size_gb: flavor.disk.sizeGb,
      filesystem: rng.pick(['ext4', 'xfs']),
      mount: rng.pick(['/mnt/scratch', '/data', '/var/lib/bench']),
      scheduler: rng.pick(['none', 'mq-deadline', 'bfq']),
    },
  };
}
const diskSpeed = (ctx: ResultContext) => ({ nvme: 8, ssd: 3, 'ceph-rbd': 1.2, hdd: 0.25 })[ctx.flavor.disk.kind];

const NETWORK_SCHEMA = {
  network: obj({
    interface: str(),
    mtu: int(576),
    link_speed_gbps: num(0, { suggestToUser: true }),
    peer: str(),
    same_site: { type: 'boolean' },
  }),
};
function networkBlock(ctx: ResultContext): Record<string, unknown> {
  const { rng, flavor } = ctx;
  return {
    network: {
      interface: rng.pick(['eth0', 'ens3', 'enp1s0']),
      mtu: rng.pick([1450, 1500, 9000]),
      link_speed_gbps: flavor.networkGbps,
      peer: `10.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(1, 254)}`,
      same_site: rng.chance(0.8),
    },
  };
}

const fioJobSchema = obj({
  name: str(),
  rw: str(),
  bs: str(),
  iodepth: int(1),
  numjobs: int(1),
  iops: num(0),
  bw_kib: num(0),
  lat_us: obj({ mean: num(0), p50: num(0), p99: num(0), p999: num(0) }),
});
function fioJobs(ctx: ResultContext, rw: string, bs: string, iops: number): Record<string, unknown>[] {
  const { rng } = ctx;
  const bsKib = bs === '4k' ? 4 : bs === '64k' ? 64 : 1024;
  return Array.from({ length: rng.int(1, 4) }, (_, i) => {
    const jobIops = rng.round(iops * rng.noise(0.06), 1);
    const mean = rng.round((1e6 / Math.max(jobIops, 1)) * 8, 1);
    return {
      name: `job${i}`,
      rw,
      bs,
      iodepth: rng.pick([1, 8, 16, 32]),
      numjobs: rng.pick([1, 2, 4]),
      iops: jobIops,
      bw_kib: rng.round(jobIops * bsKib, 0),
      lat_us: {
        mean,
        p50: rng.round(mean * 0.9, 1),
        p99: rng.round(mean * rng.float(2, 4), 1),
        p999: rng.round(mean * rng.float(5, 12), 1),
      },
    };
  });
}

/** Each benchmark's description, one a line. */
const META_COLUMNS = ['key', 'category', 'image', 'tag', 'units', 'weight', 'metric', 'args', 'url', 'description'] as const;
const META = new Map(
  `
c-ray|cpu|ghcr.io/bench-suite/c-ray|1.2|Seconds|10|result.score|-s 1600x1200 -r 8 -i sphfract -o output.ppm|https://openbenchmarking.org/test/pts/c-ray|c-ray 1.1 ray tracer (Phoronix Test Suite): seconds to render a 1600x1200 scene; lower is better.
7zip|cpu|ghcr.io/bench-suite/p7zip|22.01|MIPS|8|result.score|b -mmt=on -md=25|https://www.7-cpu.com/|7-Zip built-in LZMA benchmark: compression and decompression rating in MIPS; higher is better.
sysbench-cpu|cpu|ghcr.io/bench-suite/sysbench|1.0.20|events/s|9|result.events_per_second|cpu --cpu-max-prime=20000 --threads=0 --time=60 run|https://github.com/akopytov/sysbench|sysbench CPU test (prime numbers up to 20000): events per second; higher is better.
coremark|cpu|ghcr.io/bench-suite/coremark|1.0|Iterations/s|6|result.iterations_per_second|XCFLAGS="-DMULTITHREAD=0 -DUSE_PTHREAD" REBUILD=1|https://github.com/eembc/coremark|EEMBC CoreMark, multi-threaded: iterations per second; higher is better.
hpl|cpu|ghcr.io/bench-suite/hpl|2.3|GFLOPS|5|result.gflops|mpirun --allow-run-as-root -np $NPROC xhpl|https://www.netlib.org/benchmark/hpl/|High-Performance Linpack: double-precision GFLOPS solving a dense linear system; higher is better.
stream|cpu|ghcr.io/bench-suite/stream|5.10|MB/s|5|result.triad.best_rate_mbs|STREAM_ARRAY_SIZE=80000000 NTIMES=20|https://www.cs.virginia.edu/stream/|STREAM memory bandwidth (copy, scale, add, triad) in MB/s; higher is better.
resnet50-tf|gpu|ghcr.io/bench-suite/tf-resnet50|2.15|images/s|6|result.images_per_second|--model=resnet50 --batch_size=128 --num_batches=200 --use_fp16|https://github.com/tensorflow/benchmarks|TensorFlow ResNet-50 training throughput with synthetic ImageNet data: images per second; higher is better.
hashcat|gpu|ghcr.io/bench-suite/hashcat|6.2.6|H/s|3|result.hashes_per_second|-b -m 1400 --machine-readable|https://hashcat.net/hashcat/|hashcat benchmark mode, SHA-256 (mode 1400): hashes per second; higher is better.
cuda-bandwidth|gpu|ghcr.io/bench-suite/cuda-samples|12.2|GB/s|3|result.device_to_device_gbs|bandwidthTest --memory=pinned --mode=range --start=1048576 --end=33554432 --increment=8388608|https://github.com/NVIDIA/cuda-samples|CUDA bandwidthTest: host to device, device to host and device to device copies in GB/s; higher is better.
gromacs-gpu|gpu|ghcr.io/bench-suite/gromacs|2023.3|ns/day|3|result.ns_per_day|mdrun -s benchMEM.tpr -nb gpu -pme gpu -bonded gpu -nsteps 20000 -resetstep 10000|https://www.gromacs.org/|GROMACS molecular dynamics (benchMEM, 82k atoms) on GPU: nanoseconds simulated per day; higher is better.
blender-cycles|gpu|ghcr.io/bench-suite/blender-benchmark|4.0|Seconds|4|result.render_time_s|benchmark --blender-version 4.0.0 --device-type OPTIX classroom|https://opendata.blender.org/|Blender Cycles render of the classroom scene on the GPU: seconds to render; lower is better.
fio-randread|storage|ghcr.io/bench-suite/fio|3.36-randread|IOPS|6|result.iops|--name=randread --rw=randread --bs=4k --direct=1 --ioengine=libaio --size=4G --runtime=60 --time_based|https://github.com/axboe/fio|fio 4 KiB random reads, direct I/O: IOPS; higher is better.
fio-seqwrite|storage|ghcr.io/bench-suite/fio|3.36-seqwrite|MiB/s|5|result.bw_mib|--name=seqwrite --rw=write --bs=1M --direct=1 --ioengine=libaio --size=8G --runtime=60 --time_based|https://github.com/axboe/fio|fio 1 MiB sequential writes, direct I/O: bandwidth in MiB/s; higher is better.
fio-mixed|storage|ghcr.io/bench-suite/fio|3.36-randrw70|IOPS|4|result.total_iops|--name=mixed --rw=randrw --rwmixread=70 --bs=64k --direct=1 --ioengine=libaio --iodepth=16|https://github.com/axboe/fio|fio 70/30 random read/write mix, 64 KiB blocks: total IOPS; higher is better.
ioping|storage|ghcr.io/bench-suite/ioping|1.3|us|3|result.latency_us.avg|-c 100 -D /mnt/scratch|https://github.com/koct9i/ioping|ioping request latency on the scratch disk: average microseconds; lower is better.
iperf3-tcp|network|ghcr.io/bench-suite/iperf3|3.16-tcp|Gbits/s|5|result.throughput_gbps|-c $PEER -P 4 -t 30 -J|https://github.com/esnet/iperf|iperf3 TCP throughput to a peer VM: Gbit/s; higher is better.
iperf3-udp|network|ghcr.io/bench-suite/iperf3|3.16-udp|ms|2|result.jitter_ms|-c $PEER -u -b 1G -t 30 -J|https://github.com/esnet/iperf|iperf3 UDP at 1 Gbit/s to a peer VM: jitter in ms and loss; lower is better.
ping|network|ghcr.io/bench-suite/ping|2024.02|ms|4|result.rtt_ms.avg|-c 100 -i 0.2 $PEER|https://github.com/iputils/iputils|ICMP round-trip time to a peer VM (100 packets): average ms; lower is better.
netperf-rr|network|ghcr.io/bench-suite/netperf|2.7.0|Trans/s|2|result.transactions_per_second|-H $PEER -t TCP_RR -l 30 -- -r 1,1 -o P50_LATENCY,P90_LATENCY,P99_LATENCY|https://github.com/HewlettPackard/netperf|netperf TCP_RR request/response rate with 1-byte messages: transactions per second; higher is better.
wrk-http|network|ghcr.io/bench-suite/wrk|4.2.0|Requests/s|3|result.requests_per_second|-t4 -c64 -d30s --latency http://$PEER/index.html|https://github.com/wg/wrk|wrk HTTP load against nginx on a peer VM (64 connections): requests per second; higher is better.
`
    .trim()
    .split('\n')
    .map((line) => {
      const v = Object.fromEntries(META_COLUMNS.map((c, i) => [c, line.split('|')[i]!]));
      return [v.key!, { ...v, weight: Number(v.weight) } as Pick<BenchmarkDef, (typeof META_COLUMNS)[number]>];
    }),
);
const meta = (key: string) => META.get(key)!;

export const BENCHMARKS: BenchmarkDef[] = [
  {
    ...meta('c-ray'),
    resultSchema: obj({ score: num(0, { suggestToUser: true }), all_results: str(), runs: arr(num(0)), threads: int(1) }),
    result: (ctx) => {
      const score = ctx.rng.round((2400 / Math.sqrt(ctx.flavor.vcpus) / speed(ctx)) * ctx.rng.noise(0.05));
      const r = runs(ctx.rng, score, 3);
      return { score, all_results: r.join(' '), runs: r, threads: ctx.flavor.vcpus * 16 };
    },
  },
  {
    ...meta('7zip'),
    resultSchema: obj({
      score: num(0, { suggestToUser: true }),
      compression_mips: num(0),
      decompression_mips: num(0),
      passes: arr(obj({ dict_size: str(), compression: num(0), decompression: num(0) })),
    }),
    result: (ctx) => {
      const c = ctx.rng.round(4200 * ctx.flavor.vcpus * speed(ctx) * ctx.rng.noise(0.06), 0);
      const d = ctx.rng.round(c * ctx.rng.float(1.3, 1.6), 0);
      const passes = ['22', '23', '24', '25'].slice(0, ctx.rng.int(2, 4)).map((size) => ({
        dict_size: `2^${size}`,
        compression: ctx.rng.round(c * ctx.rng.noise(0.03), 0),
        decompression: ctx.rng.round(d * ctx.rng.noise(0.03), 0),
      }));
      return { score: Math.round((c + d) / 2), compression_mips: c, decompression_mips: d, passes };
    },
  },
  {
    ...meta('sysbench-cpu'),
    resultSchema: obj({
      events_per_second: num(0, { suggestToUser: true }),
      total_events: int(0),
      threads: int(1),
      latency_ms: obj({ min: num(0), avg: num(0), max: num(0), p95: num(0), sum: num(0) }),
    }),
    result: (ctx) => {
      const eps = ctx.rng.round(1150 * ctx.flavor.vcpus * speed(ctx) * ctx.rng.noise(0.05));
      const avg = ctx.rng.round((1000 * ctx.flavor.vcpus) / eps, 3);
      return {
        events_per_second: eps,
        total_events: Math.round(eps * 60),
        threads: ctx.flavor.vcpus,
        latency_ms: {
          min: ctx.rng.round(avg * 0.8, 3),
          avg,
          max: ctx.rng.round(avg * ctx.rng.float(3, 30), 3),
          p95: ctx.rng.round(avg * 1.1, 3),
          sum: ctx.rng.round(avg * eps * 60, 1),
        },
      };
    },
  },
  {
    ...meta('coremark'),
    resultSchema: obj({
      iterations_per_second: num(0, { suggestToUser: true }),
      iterations: int(1),
      total_ticks: int(0),
      compiler: str(),
      crc: obj({ list: str(), matrix: str(), state: str(), final: str() }),
      validated: { type: 'boolean' },
    }),
    result: (ctx) => {
      const ips = ctx.rng.round(28000 * ctx.flavor.vcpus * speed(ctx) * ctx.rng.noise(0.04), 3);
      return {
        iterations_per_second: ips,
        iterations: Math.round(ips * 12),
        total_ticks: ctx.rng.int(11000, 13000),
        compiler: ctx.rng.pick(['GCC11.4.0', 'GCC12.2.0', 'Clang 17.0.6']),
        crc: { list: `0x${ctx.rng.hex(4)}`, matrix: `0x${ctx.rng.hex(4)}`, state: `0x${ctx.rng.hex(4)}`, final: `0x${ctx.rng.hex(4)}` },
        validated: true,
      };
    },
  },
  {
    ...meta('hpl'),
    resultSchema: obj({
      gflops: num(0, { suggestToUser: true }),
      n: int(1),
      nb: int(1),
      p: int(1),
      q: int(1),
      time_s: num(0),
      residual: num(0),
      passed: { type: 'boolean' },
    }),
    result: (ctx) => {
      const g = ctx.rng.round(28 * ctx.flavor.vcpus * speed(ctx) * ctx.rng.noise(0.07), 3);
      const n = 1000 * Math.round(Math.sqrt((ctx.flavor.ramGb * 1e9 * 0.6) / 8) / 1000);
      return {
        gflops: g,
        n,
        nb: ctx.rng.pick([128, 192, 224, 256]),
        p: 1,
        q: ctx.flavor.vcpus,
        time_s: ctx.rng.round((2 * n ** 3) / 3 / (g * 1e9), 2),
        residual: ctx.rng.round(ctx.rng.float(0.001, 0.009), 6),
        passed: true,
      };
    },
  },
  {
    ...meta('stream'),
    resultSchema: obj(
      Object.fromEntries(
        ['copy', 'scale', 'add', 'triad'].map((k) => [
          k,
          obj({ best_rate_mbs: num(0), avg_time: num(0), min_time: num(0), max_time: num(0) }),
        ]),
      ),
    ),
    result: (ctx) => {
      const base = 6500 * Math.sqrt(ctx.flavor.vcpus) * ctx.rng.noise(0.08);
      const kernel = (f: number) => {
        const rate = ctx.rng.round(base * f, 1);
        const t = ctx.rng.round(1920 / rate, 6);
        return { best_rate_mbs: rate, avg_time: ctx.rng.round(t * 1.04, 6), min_time: t, max_time: ctx.rng.round(t * 1.15, 6) };
      };
      return { copy: kernel(1), scale: kernel(0.97), add: kernel(1.08), triad: kernel(1.07) };
    },
  },
  {
    ...meta('resnet50-tf'),
    resultSchema: obj({
      images_per_second: num(0, { suggestToUser: true }),
      batch_size: int(1),
      precision: str({ enum: ['fp16', 'fp32'] }),
      steps: int(1),
      step_times_ms: arr(num(0)),
    }),
    extraSchema: GPU_SCHEMA,
    extra: gpuBlock,
    result: (ctx) => {
      const ips = ctx.rng.round(410 * gpuPower(ctx) * ctx.rng.noise(0.05));
      return {
        images_per_second: ips,
        batch_size: 128,
        precision: ctx.rng.pick(['fp16', 'fp32']),
        steps: 200,
        step_times_ms: runs(ctx.rng, (128 / ips) * 1000, ctx.rng.int(4, 10), 0.05, 1),
      };
    },
  },
  {
    ...meta('hashcat'),
    resultSchema: obj({
      hash_mode: int(0),
      hash_name: str(),
      hashes_per_second: num(0, { suggestToUser: true }),
      devices: arr(obj({ id: int(1), speed: num(0), temp_c: num(0) })),
    }),
    extraSchema: GPU_SCHEMA,
    extra: gpuBlock,
    result: (ctx) => {
      const per = 3.1e9 * (gpuPower(ctx) / (ctx.flavor.gpu?.count ?? 1)) * ctx.rng.noise(0.04);
      const devices = Array.from({ length: ctx.flavor.gpu?.count ?? 1 }, (_, i) => ({
        id: i + 1,
        speed: Math.round(per * ctx.rng.noise(0.01)),
        temp_c: ctx.rng.int(55, 83),
      }));
      return { hash_mode: 1400, hash_name: 'SHA2-256', hashes_per_second: devices.reduce((s, d) => s + d.speed, 0), devices };
    },
  },
  {
    ...meta('cuda-bandwidth'),
    resultSchema: obj({
      host_to_device_gbs: num(0),
      device_to_host_gbs: num(0),
      device_to_device_gbs: num(0, { suggestToUser: true }),
      transfers: arr(obj({ bytes: int(1), h2d: num(0), d2h: num(0), d2d: num(0) })),
    }),
    extraSchema: GPU_SCHEMA,
    extra: gpuBlock,
    result: (ctx) => {
      const d2d = ctx.rng.round(300 * gpuPower(ctx) * ctx.rng.noise(0.05), 1);
      const h2d = ctx.rng.round(24 * ctx.rng.noise(0.1), 2);
      const transfers = [1048576, 9437184, 17825792, 26214400].slice(0, ctx.rng.int(2, 4)).map((bytes) => ({
        bytes,
        h2d: ctx.rng.round(h2d * ctx.rng.noise(0.05), 2),
        d2h: ctx.rng.round(h2d * 1.05 * ctx.rng.noise(0.05), 2),
        d2d: ctx.rng.round(d2d * ctx.rng.noise(0.05), 1),
      }));
      return { host_to_device_gbs: h2d, device_to_host_gbs: ctx.rng.round(h2d * 1.05, 2), device_to_device_gbs: d2d, transfers };
    },
  },
  {
    ...meta('gromacs-gpu'),
    resultSchema: obj({
      ns_per_day: num(0, { suggestToUser: true }),
      hours_per_ns: num(0),
      atoms: int(1),
      steps: int(1),
      wall_time_s: num(0),
      cycles: obj({ force: num(0), pme: num(0), update: num(0), comm: num(0) }),
    }),
    extraSchema: GPU_SCHEMA,
    extra: gpuBlock,
    result: (ctx) => {
      const ns = ctx.rng.round(150 * Math.sqrt(gpuPower(ctx)) * ctx.rng.noise(0.05), 3);
      return {
        ns_per_day: ns,
        hours_per_ns: ctx.rng.round(24 / ns, 4),
        atoms: 81743,
        steps: 20000,
        wall_time_s: ctx.rng.round((0.04 / ns) * 86400, 2),
        cycles: {
          force: ctx.rng.round(ctx.rng.float(30, 50), 1),
          pme: ctx.rng.round(ctx.rng.float(15, 30), 1),
          update: ctx.rng.round(ctx.rng.float(5, 10), 1),
          comm: ctx.rng.round(ctx.rng.float(1, 8), 1),
        },
      };
    },
  },
  {
    ...meta('blender-cycles'),
    resultSchema: obj({
      scene: str(),
      render_time_s: num(0, { suggestToUser: true }),
      samples_per_minute: num(0),
      device_type: str({ enum: ['CUDA', 'OPTIX', 'HIP'] }),
      samples: int(1),
    }),
    extraSchema: GPU_SCHEMA,
    extra: gpuBlock,
    result: (ctx) => {
      const t = ctx.rng.round((190 / gpuPower(ctx)) * ctx.rng.noise(0.05), 2);
      return {
        scene: 'classroom',
        render_time_s: t,
        samples_per_minute: ctx.rng.round((300 * 60) / t, 1),
        device_type: ctx.rng.pick(['CUDA', 'OPTIX']),
        samples: 300,
      };
    },
  },
  {
    ...meta('fio-randread'),
    resultSchema: obj({ iops: num(0, { suggestToUser: true }), bw_kib: num(0), jobs: arr(fioJobSchema) }),
    extraSchema: DISK_SCHEMA,
    extra: diskBlock,
    result: (ctx) => {
      const jobs = fioJobs(ctx, 'randread', '4k', 60000 * diskSpeed(ctx) * ctx.rng.noise(0.1));
      const iops = ctx.rng.round(
        jobs.reduce((s, j) => s + (j.iops as number), 0),
        1,
      );
      return { iops, bw_kib: ctx.rng.round(iops * 4, 0), jobs };
    },
  },
  {
    ...meta('fio-seqwrite'),
    resultSchema: obj({ bw_mib: num(0, { suggestToUser: true }), iops: num(0), jobs: arr(fioJobSchema) }),
    extraSchema: DISK_SCHEMA,
    extra: diskBlock,
    result: (ctx) => {
      const jobs = fioJobs(ctx, 'write', '1m', 350 * diskSpeed(ctx) * ctx.rng.noise(0.1));
      const iops = ctx.rng.round(
        jobs.reduce((s, j) => s + (j.iops as number), 0),
        1,
      );
      return { bw_mib: iops, iops, jobs };
    },
  },
  {
    ...meta('fio-mixed'),
    resultSchema: obj({ total_iops: num(0, { suggestToUser: true }), read_iops: num(0), write_iops: num(0), jobs: arr(fioJobSchema) }),
    extraSchema: DISK_SCHEMA,
    extra: diskBlock,
    result: (ctx) => {
      const jobs = fioJobs(ctx, 'randrw', '64k', 9000 * diskSpeed(ctx) * ctx.rng.noise(0.1));
      const total = ctx.rng.round(
        jobs.reduce((s, j) => s + (j.iops as number), 0),
        1,
      );
      return { total_iops: total, read_iops: ctx.rng.round(total * 0.7, 1), write_iops: ctx.rng.round(total * 0.3, 1), jobs };
    },
  },
  {
    ...meta('ioping'),
    resultSchema: obj({
      requests: int(1),
      iops: num(0),
      latency_us: obj({ min: num(0), avg: num(0, { suggestToUser: true }), max: num(0), mdev: num(0) }),
      samples_us: arr(num(0)),
    }),
    extraSchema: DISK_SCHEMA,
    extra: diskBlock,
    result: (ctx) => {
      const avg = ctx.rng.round((900 / diskSpeed(ctx)) * ctx.rng.noise(0.15), 1);
      return {
        requests: 100,
        iops: ctx.rng.round(1e6 / avg, 1),
        latency_us: {
          min: ctx.rng.round(avg * 0.5, 1),
          avg,
          max: ctx.rng.round(avg * ctx.rng.float(3, 20), 1),
          mdev: ctx.rng.round(avg * 0.2, 1),
        },
        samples_us: runs(ctx.rng, avg, ctx.rng.int(5, 15), 0.2, 1),
      };
    },
  },
  {
    ...meta('iperf3-tcp'),
    resultSchema: obj({
      throughput_gbps: num(0, { suggestToUser: true }),
      retransmits: int(0),
      streams: int(1),
      intervals: arr(obj({ start: num(0), end: num(0), gbps: num(0) })),
    }),
    extraSchema: NETWORK_SCHEMA,
    extra: networkBlock,
    result: (ctx) => {
      const g = ctx.rng.round(ctx.flavor.networkGbps * ctx.rng.float(0.55, 0.95), 3);
      const n = ctx.rng.int(4, 10);
      return {
        throughput_gbps: g,
        retransmits: ctx.rng.int(0, 400),
        streams: 4,
        intervals: Array.from({ length: n }, (_, i) => ({
          start: i * 3,
          end: (i + 1) * 3,
          gbps: ctx.rng.round(g * ctx.rng.noise(0.05), 3),
        })),
      };
    },
  },
  {
    ...meta('iperf3-udp'),
    resultSchema: obj({
      throughput_gbps: num(0),
      jitter_ms: num(0, { suggestToUser: true }),
      lost_percent: num(0, { maximum: 100 }),
      packets: int(0),
      lost_packets: int(0),
    }),
    extraSchema: NETWORK_SCHEMA,
    extra: networkBlock,
    result: (ctx) => {
      const packets = ctx.rng.int(2_400_000, 2_600_000);
      const lost = ctx.rng.chance(0.7) ? ctx.rng.int(0, 50) : ctx.rng.int(50, 20000);
      return {
        throughput_gbps: ctx.rng.round(ctx.rng.float(0.93, 1.0), 3),
        jitter_ms: ctx.rng.round(ctx.rng.float(0.002, 0.09), 4),
        lost_percent: ctx.rng.round((100 * lost) / packets, 4),
        packets,
        lost_packets: lost,
      };
    },
  },
  {
    ...meta('ping'),
    resultSchema: obj({
      packets_sent: int(1),
      packets_received: int(0),
      loss_percent: num(0, { maximum: 100 }),
      rtt_ms: obj({ min: num(0), avg: num(0, { suggestToUser: true }), max: num(0), mdev: num(0) }),
    }),
    extraSchema: NETWORK_SCHEMA,
    extra: networkBlock,
    result: (ctx) => {
      const avg = ctx.rng.round(ctx.rng.float(0.15, 0.9) * ctx.rng.noise(0.1), 3);
      const received = ctx.rng.chance(0.95) ? 100 : ctx.rng.int(90, 99);
      return {
        packets_sent: 100,
        packets_received: received,
        loss_percent: 100 - received,
        rtt_ms: {
          min: ctx.rng.round(avg * 0.6, 3),
          avg,
          max: ctx.rng.round(avg * ctx.rng.float(1.5, 6), 3),
          mdev: ctx.rng.round(avg * 0.15, 3),
        },
      };
    },
  },
  {
    ...meta('netperf-rr'),
    resultSchema: obj({
      transactions_per_second: num(0, { suggestToUser: true }),
      request_size: int(1),
      response_size: int(1),
      latency_us: obj({ p50: num(0), p90: num(0), p99: num(0) }),
    }),
    extraSchema: NETWORK_SCHEMA,
    extra: networkBlock,
    result: (ctx) => {
      const tps = ctx.rng.round(ctx.rng.float(9000, 30000) * ctx.rng.noise(0.05), 2);
      const p50 = ctx.rng.round(1e6 / tps, 1);
      return {
        transactions_per_second: tps,
        request_size: 1,
        response_size: 1,
        latency_us: { p50, p90: ctx.rng.round(p50 * 1.4, 1), p99: ctx.rng.round(p50 * ctx.rng.float(2, 5), 1) },
      };
    },
  },
  {
    ...meta('wrk-http'),
    resultSchema: obj({
      requests_per_second: num(0, { suggestToUser: true }),
      transfer_mbs: num(0),
      connections: int(1),
      threads: int(1),
      latency_ms: obj({ avg: num(0), stdev: num(0), max: num(0), p50: num(0), p75: num(0), p90: num(0), p99: num(0) }),
      socket_errors: obj({ connect: int(0), read: int(0), write: int(0), timeout: int(0) }),
    }),
    extraSchema: NETWORK_SCHEMA,
    extra: networkBlock,
    result: (ctx) => {
      const rps = ctx.rng.round(Math.min(ctx.flavor.vcpus, 8) * 14000 * ctx.rng.noise(0.08), 2);
      const avg = ctx.rng.round((64 / rps) * 1000, 3);
      return {
        requests_per_second: rps,
        transfer_mbs: ctx.rng.round((rps * 853) / 1e6, 2),
        connections: 64,
        threads: 4,
        latency_ms: {
          avg,
          stdev: ctx.rng.round(avg * 0.4, 3),
          max: ctx.rng.round(avg * ctx.rng.float(5, 40), 3),
          p50: ctx.rng.round(avg * 0.9, 3),
          p75: ctx.rng.round(avg * 1.2, 3),
          p90: ctx.rng.round(avg * 1.6, 3),
          p99: ctx.rng.round(avg * 3.5, 3),
        },
        socket_errors: { connect: 0, read: ctx.rng.int(0, 3), write: 0, timeout: ctx.rng.chance(0.9) ? 0 : ctx.rng.int(1, 40) },
      };
    },
  },
];

/**
 * The origin service's shape (`--shape origin`): four benchmarks of c-ray's documents, each with a
 * quarter of the results. `machine.cpu.count` and `result.score` are suggested to users;
 * `machine.memory.available_mb` and `result.threads` are numbers the schema describes, unsuggested.
 */
export const ORIGIN_BENCHMARKS: BenchmarkDef[] = ['1.2', '1.3', '1.4', '1.5'].map((tag) => ({
  ...BENCHMARKS[0]!,
  tag,
  key: `c-ray-${tag}`,
}));

/** The result document of one run of `def` on a machine of `ctx.flavor`. */
export function resultDocument(def: BenchmarkDef, ctx: ResultContext): Record<string, unknown> {
  const result = def.result(ctx);
  const duration = ctx.rng.float(60, 900);
  return {
    test: def.key,
    version: def.tag,
    units: def.units,
    arguments: def.args,
    machine: machine(ctx),
    environment: environment(ctx, duration),
    result,
    ...(def.extra ? def.extra(ctx) : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Sites, flavors and tags

const SITE_NAMES =
  'CESGA IFCA-LCG2 CESNET-MCC CYFRONET-CLOUD INFN-BARI INFN-CATANIA DESY-HH KIT-SCC SURF-HPC CSC-CPOUTA GRNET-OKEANOS IISAS-FEDCLOUD UPV-GRyCAP LIP-LISBON PSNC-CLOUD IN2P3-CC IJCLAB-CLOUD UNIMELB-NECTAR NCG-INGRID-PT TUBITAK-ULAKBIM BIFI-ZARAGOZA CETA-CIEMAT SCAI-FRAUNHOFER FZJ-JSC GWDG-GOE LRZ-MUC CINECA-ADA BSC-MN EPCC-EDINBURGH STFC-SCD NIKHEF-AMS UIO-NREC NDGF-T1 CSCS-LUGANO UNIGE-BAOBAB IJS-VEGA ARNES-SI SRCE-CROATIA HG-ARCC RO-ISS-BUC IICT-BAS-SOFIA IPB-BELGRADE UKIM-SKOPJE GRENA-TBILISI IIAP-YEREVAN IUCC-TELAVIV CLOUDIFIN-PT EGI-FEDCLOUD-UK WCSS-WROCLAW TARTU-HPC'.split(
    ' ',
  );
const CITIES =
  'Santiago de Compostela/Spain|Santander/Spain|Prague/Czech Republic|Krakow/Poland|Bari/Italy|Catania/Italy|Hamburg/Germany|Karlsruhe/Germany|Amsterdam/Netherlands|Espoo/Finland|Athens/Greece|Bratislava/Slovakia|Valencia/Spain|Lisbon/Portugal|Poznan/Poland|Villeurbanne/France|Orsay/France|Melbourne/Australia|Braga/Portugal|Ankara/Turkey'
    .split('|')
    .map((c) => c.split('/') as [string, string]);
const STREETS =
  'Avenida de Vigo|Avda. de los Castros|Zikova|Nawojki|Via Orabona|Via Santa Sofia|Notkestrasse|Hermann-von-Helmholtz-Platz|Science Park|Keilaranta'.split(
    '|',
  );

const CPU_BRANDS = [
  { brand: 'Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz', ghz: 2.5 },
  { brand: 'Intel(R) Xeon(R) Gold 6240 CPU @ 2.60GHz', ghz: 2.6 },
  { brand: 'Intel(R) Xeon(R) Silver 4214 CPU @ 2.20GHz', ghz: 2.2 },
  { brand: 'Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz', ghz: 2.6 },
  { brand: 'AMD EPYC 7452 32-Core Processor', ghz: 2.35 },
  { brand: 'AMD EPYC 7763 64-Core Processor', ghz: 2.45 },
  { brand: 'AMD EPYC 9354 32-Core Processor', ghz: 3.25 },
  { brand: 'Ampere(R) Altra(R) Q80-30', ghz: 3.0 },
];
const GPUS = [
  { model: 'NVIDIA Tesla T4', memoryGb: 16 },
  { model: 'NVIDIA Tesla V100-PCIE-32GB', memoryGb: 32 },
  { model: 'NVIDIA A100-SXM4-40GB', memoryGb: 40 },
  { model: 'NVIDIA L4', memoryGb: 24 },
  { model: 'NVIDIA H100 80GB HBM3', memoryGb: 80 },
];
/** Naming schemes of flavors, as different cloud sites name them. */
const FLAVOR_STYLES: ((size: string, vcpus: number, ram: number, gpu: string | null) => string)[] = [
  (size, _v, _r, gpu) => (gpu ? `g1.${size}` : `m1.${size}`),
  (_s, v, r, gpu) => (gpu ? `gpu.${v}core-${r}ram-${gpu}` : `hpc.${v}core-${r}ram`),
  (_s, v, r, gpu) => (gpu ? `g${v}r${r}.${gpu}` : `c${v}r${r}`),
  (size, _v, _r, gpu) => (gpu ? `${gpu}.${size}` : `standard.${size}`),
  (size, v, _r, gpu) => (gpu ? `cm4.${size}.${gpu}` : `cm4.${size}-${v}`),
];
const SIZES = [
  { size: 'tiny', vcpus: 1, ram: 2 },
  { size: 'small', vcpus: 2, ram: 4 },
  { size: 'medium', vcpus: 4, ram: 8 },
  { size: 'large', vcpus: 8, ram: 16 },
  { size: 'xlarge', vcpus: 16, ram: 32 },
  { size: '2xlarge', vcpus: 32, ram: 64 },
  { size: 'mem.large', vcpus: 8, ram: 64 },
  { size: 'hpc', vcpus: 64, ram: 256 },
];

export const TAGS =
  'cpu-intensive memory-bound io-bound network-bound gpu baseline regression nightly manual ci production staging ssd nvme hdd ceph 10gbe 25gbe infiniband avx512 arm64 sriov hugepages numa-pinned overcommitted spot preemptible kvm container bare-metal'.split(
    ' ',
  );

export interface SiteSpec {
  name: string;
  address: string;
  description: string;
  flavors: { name: string; description: string; spec: FlavorSpec }[];
}

/** `sites` sites with `flavorsPerSite` flavors each (2 of them with GPUs), from the generator `rng`. */
export function siteSpecs(rng: Rng, sites: number, flavorsPerSite: number): SiteSpec[] {
  const out: SiteSpec[] = [];
  for (let s = 0; s < sites; s++) {
    const base = SITE_NAMES[s % SITE_NAMES.length]!;
    const name = s < SITE_NAMES.length ? base : `${base}-${Math.floor(s / SITE_NAMES.length) + 1}`;
    const [city, country] = CITIES[s % CITIES.length]!;
    const style = FLAVOR_STYLES[s % FLAVOR_STYLES.length]!;
    const cpu = rng.pick(CPU_BRANDS);
    const diskKind = rng.pick(['nvme', 'ssd', 'ceph-rbd', 'ceph-rbd', 'hdd'] as const);
    const net = rng.pick([10, 10, 25, 40, 100]);
    const flavors: SiteSpec['flavors'] = [];
    const used = new Set<string>();
    for (let f = 0; f < flavorsPerSite; f++) {
      const gpuFlavor = f >= flavorsPerSite - Math.max(1, Math.round(flavorsPerSite / 5));
      const size = gpuFlavor ? SIZES[3 + (f % 3)]! : SIZES[f % SIZES.length]!;
      const gpuModel = gpuFlavor ? rng.pick(GPUS) : null;
      const gpuShort = gpuModel
        ? gpuModel.model
            .split(' ')[1]!
            .toLowerCase()
            .replace(/[^a-z0-9]/g, '')
        : null;
      let flavorName = style(size.size, size.vcpus, size.ram, gpuShort);
      for (let k = 2; used.has(flavorName); k++) flavorName = `${style(size.size, size.vcpus, size.ram, gpuShort)}-v${k}`;
      used.add(flavorName);
      const spec: FlavorSpec = {
        vcpus: size.vcpus,
        ramGb: size.ram,
        cpuBrand: cpu.brand,
        ghz: cpu.ghz,
        gpu: gpuModel ? { model: gpuModel.model, memoryGb: gpuModel.memoryGb, count: rng.pick([1, 1, 2, 4]) } : null,
        disk: { kind: diskKind, sizeGb: rng.pick([20, 40, 80, 160, 500]) },
        networkGbps: net,
      };
      const gpuText = spec.gpu ? `, ${spec.gpu.count}x ${spec.gpu.model}` : '';
      flavors.push({ name: flavorName, description: `${spec.vcpus} vCPU, ${spec.ramGb} GiB RAM${gpuText}, ${diskKind} disk`, spec });
    }
    out.push({
      name,
      address: `${rng.pick(STREETS)} ${rng.int(1, 120)}, ${city}, ${country}`,
      description: `${name} research cloud (${country}), OpenStack, ${net} Gbit/s network`,
      flavors,
    });
  }
  return out;
}
