/**
 * The 20 benchmarks (one a line in META), each with its JSON Schema and its documents: the run's machine and environment, the
 * `result` of its category's template around a headline metric, and the category's hardware block (gpu, disk, network).
 */
import type { Rng } from './generate.ts';

export type Category = 'cpu' | 'gpu' | 'storage' | 'network';

/** What a flavor offers; results run on it describe the machine accordingly. */
export type FlavorSpec = Record<'vcpus' | 'ramGb' | 'ghz' | 'networkGbps', number> & {
  cpuBrand: string;
  gpu: { model: string; memoryGb: number; count: number } | null;
  disk: { kind: 'nvme' | 'ssd' | 'ceph-rbd' | 'hdd'; sizeGb: number };
};

/** `age`: 0..1 across the two years (software gets a little faster with time). */
export type ResultContext = { rng: Rng; flavor: FlavorSpec; siteIndex: number; age: number };

const META_COLUMNS = ['key', 'category', 'image', 'tag', 'units', 'weight', 'metric', 'base', 'args', 'url', 'description'] as const;
/**
 * `weight`: how many results it gets, relatively; `metric`: the dotted path of its headline metric;
 * `base`: the headline on a machine of power 1 (one vCPU at 2.5 GHz, one T4, a disk of speed 1, 10 Gbit/s).
 */
export type BenchmarkDef = Record<Exclude<(typeof META_COLUMNS)[number], 'category' | 'weight' | 'base'>, string> & {
  category: Category;
  weight: number;
  base: number;
};
const META = `
c-ray|cpu|ghcr.io/bench-suite/c-ray|1.2|Seconds|10|result.score|2400|-s 1600x1200 -r 8 -i sphfract -o output.ppm|https://openbenchmarking.org/test/pts/c-ray|c-ray 1.1 ray tracer (Phoronix Test Suite): seconds to render a 1600x1200 scene; lower is better.
7zip|cpu|ghcr.io/bench-suite/p7zip|22.01|MIPS|8|result.score|5100|b -mmt=on -md=25|https://www.7-cpu.com/|7-Zip built-in LZMA benchmark: compression and decompression rating in MIPS; higher is better.
sysbench-cpu|cpu|ghcr.io/bench-suite/sysbench|1.0.20|events/s|9|result.events_per_second|1150|cpu --cpu-max-prime=20000 --threads=0 --time=60 run|https://github.com/akopytov/sysbench|sysbench CPU test (prime numbers up to 20000): events per second; higher is better.
coremark|cpu|ghcr.io/bench-suite/coremark|1.0|Iterations/s|6|result.iterations_per_second|28000|XCFLAGS="-DMULTITHREAD=0 -DUSE_PTHREAD" REBUILD=1|https://github.com/eembc/coremark|EEMBC CoreMark, multi-threaded: iterations per second; higher is better.
hpl|cpu|ghcr.io/bench-suite/hpl|2.3|GFLOPS|5|result.gflops|28|mpirun --allow-run-as-root -np $NPROC xhpl|https://www.netlib.org/benchmark/hpl/|High-Performance Linpack: double-precision GFLOPS solving a dense linear system; higher is better.
stream|cpu|ghcr.io/bench-suite/stream|5.10|MB/s|5|result.triad_mbs|3000|STREAM_ARRAY_SIZE=80000000 NTIMES=20|https://www.cs.virginia.edu/stream/|STREAM memory bandwidth (copy, scale, add, triad) in MB/s; higher is better.
resnet50-tf|gpu|ghcr.io/bench-suite/tf-resnet50|2.15|images/s|6|result.images_per_second|410|--model=resnet50 --batch_size=128 --num_batches=200 --use_fp16|https://github.com/tensorflow/benchmarks|TensorFlow ResNet-50 training throughput with synthetic ImageNet data: images per second; higher is better.
hashcat|gpu|ghcr.io/bench-suite/hashcat|6.2.6|H/s|3|result.hashes_per_second|3100000000|-b -m 1400 --machine-readable|https://hashcat.net/hashcat/|hashcat benchmark mode, SHA-256 (mode 1400): hashes per second; higher is better.
cuda-bandwidth|gpu|ghcr.io/bench-suite/cuda-samples|12.2|GB/s|3|result.device_to_device_gbs|300|bandwidthTest --memory=pinned --mode=range --start=1048576 --end=33554432 --increment=8388608|https://github.com/NVIDIA/cuda-samples|CUDA bandwidthTest: host to device, device to host and device to device copies in GB/s; higher is better.
gromacs-gpu|gpu|ghcr.io/bench-suite/gromacs|2023.3|ns/day|3|result.ns_per_day|150|mdrun -s benchMEM.tpr -nb gpu -pme gpu -bonded gpu -nsteps 20000 -resetstep 10000|https://www.gromacs.org/|GROMACS molecular dynamics (benchMEM, 82k atoms) on GPU: nanoseconds simulated per day; higher is better.
blender-cycles|gpu|ghcr.io/bench-suite/blender-benchmark|4.0|Seconds|4|result.render_time_s|190|benchmark --blender-version 4.0.0 --device-type OPTIX classroom|https://opendata.blender.org/|Blender Cycles render of the classroom scene on the GPU: seconds to render; lower is better.
fio-randread|storage|ghcr.io/bench-suite/fio|3.36-randread|IOPS|6|result.iops|60000|--name=randread --rw=randread --bs=4k --direct=1 --ioengine=libaio --size=4G --runtime=60 --time_based|https://github.com/axboe/fio|fio 4 KiB random reads, direct I/O: IOPS; higher is better.
fio-seqwrite|storage|ghcr.io/bench-suite/fio|3.36-seqwrite|MiB/s|5|result.bw_mib|350|--name=seqwrite --rw=write --bs=1M --direct=1 --ioengine=libaio --size=8G --runtime=60 --time_based|https://github.com/axboe/fio|fio 1 MiB sequential writes, direct I/O: bandwidth in MiB/s; higher is better.
fio-mixed|storage|ghcr.io/bench-suite/fio|3.36-randrw70|IOPS|4|result.total_iops|9000|--name=mixed --rw=randrw --rwmixread=70 --bs=64k --direct=1 --ioengine=libaio --iodepth=16|https://github.com/axboe/fio|fio 70/30 random read/write mix, 64 KiB blocks: total IOPS; higher is better.
ioping|storage|ghcr.io/bench-suite/ioping|1.3|us|3|result.latency_avg_us|900|-c 100 -D /mnt/scratch|https://github.com/koct9i/ioping|ioping request latency on the scratch disk: average microseconds; lower is better.
iperf3-tcp|network|ghcr.io/bench-suite/iperf3|3.16-tcp|Gbits/s|5|result.throughput_gbps|7.5|-c $PEER -P 4 -t 30 -J|https://github.com/esnet/iperf|iperf3 TCP throughput to a peer VM: Gbit/s; higher is better.
iperf3-udp|network|ghcr.io/bench-suite/iperf3|3.16-udp|ms|2|result.jitter_ms|0.04|-c $PEER -u -b 1G -t 30 -J|https://github.com/esnet/iperf|iperf3 UDP at 1 Gbit/s to a peer VM: jitter in ms and loss; lower is better.
ping|network|ghcr.io/bench-suite/ping|2024.02|ms|4|result.rtt_avg_ms|0.5|-c 100 -i 0.2 $PEER|https://github.com/iputils/iputils|ICMP round-trip time to a peer VM (100 packets): average ms; lower is better.
netperf-rr|network|ghcr.io/bench-suite/netperf|2.7.0|Trans/s|2|result.transactions_per_second|18000|-H $PEER -t TCP_RR -l 30 -- -r 1,1 -o P50_LATENCY,P90_LATENCY,P99_LATENCY|https://github.com/HewlettPackard/netperf|netperf TCP_RR request/response rate with 1-byte messages: transactions per second; higher is better.
wrk-http|network|ghcr.io/bench-suite/wrk|4.2.0|Requests/s|3|result.requests_per_second|90000|-t4 -c64 -d30s --latency http://$PEER/index.html|https://github.com/wg/wrk|wrk HTTP load against nginx on a peer VM (64 connections): requests per second; higher is better.
`;
/** The rows of a text table, one a line, its cells separated by `|`. */
const cells = (line: string) => line.split('|');
export const table = (text: string) => text.trim().split('\n').map(cells);
export const BENCHMARKS: BenchmarkDef[] = table(META).map((row) => {
  const v = Object.fromEntries(row.map((x, i) => [META_COLUMNS[i], x]));
  return { ...v, weight: Number(v.weight), base: Number(v.base) } as BenchmarkDef;
});

/**
 * The origin service's shape (`--shape origin`): four benchmarks of c-ray's documents. `machine.cpu.count`
 * and `result.score` are suggested to users; `machine.memory.available_mb` and `result.threads` are not.
 */
export const ORIGIN_BENCHMARKS = ['1.2', '1.3', '1.4', '1.5'].map((tag): BenchmarkDef => ({ ...BENCHMARKS[0]!, tag, key: `c-ray-${tag}` }));

const num = (minimum = 0, extra: Record<string, unknown> = {}) => ({ type: 'number', minimum, ...extra });
const int = (minimum = 0, extra: Record<string, unknown> = {}) => ({ type: 'integer', minimum, ...extra });
const str = (extra: Record<string, unknown> = {}) => ({ type: 'string', ...extra });
const obj = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: 'object', required, properties });
const arr = (items: Record<string, unknown>, minItems = 1) => ({ type: 'array', items, minItems });
const suggested = num(0, { suggestToUser: true });
const words = (s: string) => s.split(' ');

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

const CPU_FLAGS = words(
  'fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx ' +
    'pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 ' +
    'sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch ' +
    'cpuid_fault invpcid_single ssbd ibrs ibpb stibp ibrs_enhanced fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms ' +
    'invpcid rtm avx512f avx512dq rdseed adx smap clflushopt clwb avx512cd avx512bw avx512vl xsaveopt xsavec xgetbv1 ' +
    'xsaves arat umip pku ospke avx512_vnni md_clear arch_capabilities',
);
const ARM_FLAGS = words('fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid');
const KERNELS = words('5.15.0-105-generic 5.15.0-119-generic 6.1.0-18-amd64 6.5.0-35-generic 6.8.0-45-generic 4.18.0-513.el8.x86_64');
const DISTROS = cells(
  'Ubuntu 22.04.4 LTS|Ubuntu 24.04.1 LTS|Debian GNU/Linux 12 (bookworm)|Rocky Linux 8.9 (Green Obsidian)|AlmaLinux 9.4',
);
const PACKAGES = (
  'glibc 2.31 2.35 2.36 2.39|gcc 9.4.0 11.4.0 12.2.0 13.2.0|openmpi 4.1.2 4.1.5 5.0.3|openblas 0.3.20 0.3.21 0.3.26|' +
  'python3 3.10.12 3.11.2 3.12.3|numpy 1.24.4 1.26.4 2.0.1|libaio1 0.3.112-13 0.3.113-5|openssl 3.0.2 3.0.13 3.2.1|' +
  'zlib1g 1.2.11.dfsg-2 1.2.13.dfsg-1 1.3.dfsg-3|linux-tools 5.15.0-105 6.1.0-18 6.8.0-45'
)
  .split('|')
  .map(words);

const [HYPERVISORS, CPU_MODELS] = [words('KVM KVM KVM VMware'), words('host-passthrough host-model EPYC-Rome Cascadelake-Server')];

function machine({ rng, flavor }: ResultContext): Record<string, unknown> {
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
      flags: arm ? ARM_FLAGS : CPU_FLAGS.slice(0, flagCount),
    },
    memory: { total_mb: totalMb, available_mb: Math.round(totalMb * rng.float(0.6, 0.95)), swap_mb: rng.chance(0.3) ? 2048 : 0 },
    os: { system: 'Linux', release: rng.pick(KERNELS), distro: rng.pick(DISTROS), python: rng.pick(words('3.10.12 3.11.2 3.12.3')) },
    virtualization: { hypervisor: rng.pick(HYPERVISORS), cpu_model: rng.pick(CPU_MODELS) },
  };
}

function environment({ rng, siteIndex }: ResultContext, durationS: number): Record<string, unknown> {
  const labels: Record<string, string> = {};
  for (let i = 0, n = rng.int(0, 4); i < n; i++)
    labels[rng.pick(words('project campaign owner ci_job region queue'))] =
      `${rng.pick(words('eosc ai4eu tier2 nightly qa hpc'))}-${rng.int(1, 999)}`;
  return {
    runtime: rng.pick(['docker 24.0.7', 'docker 26.1.3', 'podman 4.9.4', 'apptainer 1.3.1']),
    image_digest: `sha256:${rng.hex(64)}`,
    started_by: rng.pick(['benchmarks-cli 1.4.2', 'benchmarks-cli 1.5.0', 'benchmarks-cli 1.5.1']),
    hostname: `vm-${rng.hex(8)}.site${siteIndex}.cloud`,
    timezone: 'UTC',
    duration_s: rng.round(durationS, 1),
    labels,
    packages: Object.fromEntries(
      rng.sample(PACKAGES, rng.int(3, PACKAGES.length)).map(([name, ...versions]) => [name, rng.pick(versions)]),
    ),
  };
}

const GPU_POWER: Record<string, number> = { H100: 6, A100: 4, V100: 2.2, L4: 1.4 };
const DISK_SPEED = { nvme: 8, ssd: 3, 'ceph-rbd': 1.2, hdd: 0.25 };
const DRIVERS = words('535.161.08 550.54.15 550.90.07');

/**
 * A category's template: the headline on a machine (falling as its power grows when lower is better),
 * how many runs `result` lists, and the block describing the hardware measured: name, schema, value.
 */
type Template = {
  value(base: number, ctx: ResultContext, lower: boolean): number;
  runs: number;
  block?: [string, Record<string, unknown>, (ctx: ResultContext) => unknown];
};
const scaled = (power: (ctx: ResultContext) => number) => (base: number, ctx: ResultContext, lower: boolean) =>
  lower ? base / power(ctx) : base * power(ctx);
const TEMPLATES: Record<Category, Template> = {
  cpu: {
    value: (base, { flavor: f, age }, lower) => {
      const speed = (f.ghz / 2.5) * (1 + age * 0.05);
      return lower ? base / Math.sqrt(f.vcpus) / speed : base * f.vcpus * speed;
    },
    runs: 3,
  },
  gpu: {
    value: scaled(({ flavor: { gpu } }) => (GPU_POWER[/H100|A100|V100|L4/.exec(gpu!.model)?.[0] ?? ''] ?? 1) * gpu!.count),
    runs: 8,
    block: [
      'gpu',
      obj({ name: str({ suggestToUser: true }), count: int(1), memory_mb: int(1), driver: str() }),
      ({ rng, flavor: { gpu } }) => ({ name: gpu!.model, count: gpu!.count, memory_mb: gpu!.memoryGb * 1024, driver: rng.pick(DRIVERS) }),
    ],
  },
  storage: {
    value: scaled(({ flavor }) => DISK_SPEED[flavor.disk.kind]),
    runs: 6,
    block: [
      'disk',
      obj({ kind: str({ enum: Object.keys(DISK_SPEED), suggestToUser: true }), size_gb: int(1), filesystem: str() }),
      ({ rng, flavor: { disk } }) => ({ kind: disk.kind, size_gb: disk.sizeGb, filesystem: rng.pick(['ext4', 'xfs']) }),
    ],
  },
  network: {
    value: scaled(({ flavor }) => Math.sqrt(flavor.networkGbps / 10)),
    runs: 10,
    block: [
      'network',
      obj({ link_speed_gbps: suggested, mtu: int(576), same_site: { type: 'boolean' } }),
      ({ rng, flavor }) => ({ link_speed_gbps: flavor.networkGbps, mtu: rng.pick([1450, 1500, 9000]), same_site: rng.chance(0.8) }),
    ],
  },
};

const leaf = (def: BenchmarkDef) => def.metric.slice('result.'.length);

/** The full JSON Schema of a benchmark's results. */
export function benchmarkSchema(def: BenchmarkDef): Record<string, unknown> {
  const block = TEMPLATES[def.category].block;
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `https://benchmarks.example.org/schemas/${def.key}-${def.tag}.json`,
    title: `${def.key} ${def.tag} result`,
    description: def.description,
    type: 'object',
    required: ['test', 'version', 'units', 'arguments', 'machine', 'environment', 'result', ...(block ? [block[0]] : [])],
    properties: {
      test: { const: def.key },
      version: { type: 'string', const: def.tag },
      units: { const: def.units },
      arguments: { type: 'string' },
      machine: { $ref: '#/$defs/machine' },
      environment: { $ref: '#/$defs/environment' },
      result: obj({ [leaf(def)]: suggested, all_results: str(), runs: arr(num(0)), threads: int(1) }),
      ...(block ? { [block[0]]: block[1] } : {}),
    },
    $defs: { machine: MACHINE_SCHEMA, environment: ENVIRONMENT_SCHEMA },
  };
}

/** The result document of one run of `def` on a machine of `ctx.flavor`. */
export function resultDocument(def: BenchmarkDef, ctx: ResultContext): Record<string, unknown> {
  const { rng, flavor } = ctx;
  const t = TEMPLATES[def.category];
  const value = t.value(def.base, ctx, def.description.includes('lower is better'));
  const headline = rng.round(value * rng.noise(0.05), value < 1 ? 4 : 2);
  const runs = Array.from({ length: t.runs }, () => rng.round(headline * rng.noise(0.03)));
  const result = { [leaf(def)]: headline, all_results: runs.join(' '), runs, threads: flavor.vcpus * 16 };
  const duration = rng.float(60, 900);
  const run = { test: def.key, version: def.tag, units: def.units, arguments: def.args, machine: machine(ctx) };
  return { ...run, environment: environment(ctx, duration), result, ...(t.block ? { [t.block[0]]: t.block[2](ctx) } : {}) };
}
