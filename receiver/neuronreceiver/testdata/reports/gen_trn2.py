#!/usr/bin/env python3
"""Writes trn2.json: one neuron-monitor report from a trn2.48xlarge (16
Trainium2 devices, 4 logical NeuronCores each, LNC=2) in the format of
neuron-monitor 2.x on Trn2 (flops, v3d, neuron_device_type, memory size).

Two runtimes: a training job on devices 0-11 (cores 0-47) and an inference
server on devices 12-13 (cores 48-55); cores 56-63 are idle. As neuron-monitor
does, every runtime lists all 64 cores, with zeros for the cores it does not
use. Values are deterministic so the golden files are stable.

    python3 gen_trn2.py > trn2.json
"""
import json

CORES = 64
PERIOD = 5.000000000


def util(seed, lo, hi):
    # deterministic spread inside [lo, hi]
    return round(lo + ((seed * 7919) % 1000) / 1000 * (hi - lo), 6)


def counters(cores, lo, hi, flops_per_pct, period):
    in_use = {}
    for c in range(CORES):
        if c in cores:
            u = util(c + 1, lo, hi)
            in_use[str(c)] = {
                "neuroncore_utilization": u,
                "flops": int(u * flops_per_pct),
                "v3d": {
                    "nc_v3.%d" % (2 * c): {"neuroncore_utilization": round(min(100.0, u + 1.5), 6)},
                    "nc_v3.%d" % (2 * c + 1): {"neuroncore_utilization": round(max(0.0, u - 1.5), 6)},
                },
            }
        else:
            in_use[str(c)] = {
                "neuroncore_utilization": 0,
                "flops": 0,
                "v3d": {
                    "nc_v3.%d" % (2 * c): {"neuroncore_utilization": 0},
                    "nc_v3.%d" % (2 * c + 1): {"neuroncore_utilization": 0},
                },
            }
    return {"period": period, "neuroncores_in_use": in_use, "error": ""}


def memory(cores, per_core, host, period, model_name):
    nc = {}
    total = 0
    for c in range(CORES):
        if c in cores:
            nc[str(c)] = dict(per_core)
            total += sum(per_core.values())
        else:
            nc[str(c)] = {"constants": 0, "model_code": 0, "model_shared_scratchpad": 0, "runtime_memory": 0, "tensors": 0}
    subgraphs = {}
    for i, c in enumerate(sorted(cores)):
        subgraphs["sg_%02d" % i] = {
            "memory_used_bytes": {
                "host": 20480,
                "neuron_device": per_core["constants"] + per_core["model_code"],
                "usage_breakdown": {
                    "host": {"application_memory": 20480, "constants": 0, "dma_buffers": 0, "tensors": 0},
                    "neuron_device": {"constants": per_core["constants"], "model_code": per_core["model_code"], "runtime_memory": 0, "tensors": 0},
                },
            },
            "neuroncore_index": c,
            "neuron_device_index": c // 4,
        }
    return {
        "period": period,
        "neuron_runtime_used_bytes": {
            "host": host,
            "neuron_device": total,
            "usage_breakdown": {
                "host": {"application_memory": host - 1048576 - 4194304, "constants": 0, "dma_buffers": 1048576, "tensors": 4194304},
                "neuroncore_memory_usage": nc,
            },
        },
        "loaded_models": [
            {"name": model_name, "uuid": "91f2f66e83ea419dace1da07617ad39f", "model_id": 10005, "is_running": True, "subgraphs": subgraphs}
        ],
        "error": "",
    }


def latency(base):
    ps = ["p0", "p1", "p25", "p50", "p75", "p99", "p100"]
    mult = [0.91, 0.93, 0.98, 1.0, 1.03, 1.21, 1.47]
    return {p: round(base * m, 9) for p, m in zip(ps, mult)}


def runtime(pid, tag, cores, lo, hi, flops_per_pct, per_core, host, completed, errs, base_latency, vcpu):
    return {
        "pid": pid,
        "address": "",
        "neuron_runtime_tag": tag,
        "error": "",
        "report": {
            "neuroncore_counters": counters(cores, lo, hi, flops_per_pct, 5.000113182),
            "execution_stats": {
                "period": 5.000613214,
                "error_summary": {"generic": errs, "numerical": 0, "transient": 0, "model": 0, "runtime": 0, "hardware": 0},
                "execution_summary": {"completed": completed, "completed_with_err": errs, "completed_with_num_err": 0, "timed_out": 0, "incorrect_input": 0, "failed_to_queue": 0},
                "latency_stats": {"total_latency": latency(base_latency), "device_latency": latency(base_latency * 0.94)},
                "error": "",
            },
            "memory_used": memory(cores, per_core, host, 5.000727574, tag + ".neff"),
            "neuron_runtime_vcpu_usage": {"period": 5.000604818, "vcpu_usage": {"user": vcpu[0], "system": vcpu[1]}, "error": ""},
        },
    }


train = runtime(48213, "llama3-70b-pretrain", set(range(0, 48)), 86.0, 97.0, 7.1e11,
                {"constants": 1207959552, "model_code": 188743680, "model_shared_scratchpad": 536870912, "runtime_memory": 67108864, "tensors": 8589934592},
                37580963840, 25, 0, 0.19245, (38.25, 6.5))
serve = runtime(51877, "vllm-llama3-8b", set(range(48, 56)), 31.0, 44.0, 6.3e11,
                {"constants": 2147483648, "model_code": 104857600, "model_shared_scratchpad": 268435456, "runtime_memory": 33554432, "tensors": 6442450944},
                12884901888, 1450, 2, 0.0412, (14.3, 1.875))

report = {
    "neuron_runtime_data": [train, serve],
    "system_data": {
        "neuron_hw_counters": {
            "period": 5.000359284,
            "neuron_devices": [
                {"neuron_device_index": d, "mem_ecc_corrected": 0, "mem_ecc_uncorrected": 0, "sram_ecc_uncorrected": 0, "sram_ecc_corrected": 0}
                for d in range(16)
            ],
            "error": "",
        },
        "vcpu_usage": {
            "period": 5.000974868,
            "average_usage": {"user": 32.77, "nice": 0, "system": 4.87, "idle": 62.36, "io_wait": 0, "irq": 0, "soft_irq": 0},
            "usage_data": {},
            "context_switch_count": 1234567,
            "error": "",
        },
        "memory_info": {
            "period": 5.000411129,
            "memory_total_bytes": 2147483648000,
            "memory_used_bytes": 412316860416,
            "swap_total_bytes": 0,
            "swap_used_bytes": 0,
            "error": "",
        },
    },
    "instance_info": {
        "instance_name": "trn2-train-17",
        "instance_id": "i-0a1b2c3d4e5f60718",
        "instance_type": "trn2.48xlarge",
        "instance_availability_zone": "us-east-2b",
        "instance_availability_zone_id": "use2-az2",
        "instance_region": "us-east-2",
        "ami_id": "ami-0f1e2d3c4b5a69788",
        "subnet_id": "subnet-0c4b1e2d3f4a5b6c7",
        "error": "",
    },
    "neuron_hardware_info": {
        "neuron_device_type": "trainium2",
        "neuron_device_version": "v4",
        "neuroncore_version": "v3d",
        "neuron_device_count": 16,
        "neuron_device_memory_size": 103079215104,
        "neuroncore_per_device_count": 4,
        "logical_neuroncore_config": 2,
        "error": "",
    },
}

print(json.dumps(report, separators=(",", ":")))
