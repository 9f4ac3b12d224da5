package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMalformedJSON(t *testing.T) {
	_, _, err := Decode([]byte(`{"neuron_runtime_data": [ {"pid": oops} ]}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "malformed JSON")
}

func TestNotAReport(t *testing.T) {
	_, _, err := Decode([]byte(`{"neuroncore_utilization": 3}`))
	assert.ErrorIs(t, err, ErrNotAReport)
	_, _, err = Decode([]byte(`[1,2]`))
	assert.Error(t, err)
}

func TestNullRuntimeData(t *testing.T) {
	r, problems, err := Decode([]byte(`{"neuron_runtime_data": null, "instance_info": {"instance_type": "trn1.2xlarge"}}`))
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.True(t, r.RuntimesNull)
	assert.Empty(t, r.Runtimes)
	assert.Equal(t, "trn1.2xlarge", r.Instance.Type)
	assert.Nil(t, r.Hardware)
}

// A group with an unexpected shape costs that group only.
func TestBrokenGroupIsIsolated(t *testing.T) {
	doc := `{"neuron_runtime_data":[{"pid":42,"neuron_runtime_tag":"svc","error":"","report":{
		"neuroncore_counters":{"period":1,"neuroncores_in_use":{"0":{"neuroncore_utilization":"high"}},"error":""},
		"memory_used":{"period":1,"neuron_runtime_used_bytes":{"host":10,"device":20,"usage_breakdown":{"neuroncore_memory_usage":{"0":{"tensors":5}}}},"error":""},
		"neuron_runtime_vcpu_usage":{"period":1,"vcpu_usage":{"user":1.5,"system":0.5},"error":""}}}],
		"neuron_hardware_info":{"neuron_device_count":1,"neuroncore_per_device_count":2,"error":""}}`
	r, problems, err := Decode([]byte(doc))
	require.NoError(t, err)
	require.Len(t, problems, 1)
	assert.Equal(t, "neuron_runtime_data/neuroncore_counters", problems[0].Key)
	assert.Contains(t, problems[0].Error(), `neuron_runtime_data[0] (pid 42, tag "svc") neuroncore_counters:`)
	require.Len(t, r.Runtimes, 1)
	rt := r.Runtimes[0]
	assert.Nil(t, rt.NeuronCoreCounters)
	require.NotNil(t, rt.MemoryUsed)
	assert.Equal(t, 20.0, *rt.MemoryUsed.DeviceBytes, `"device" is read where "neuron_device" is missing`)
	assert.Equal(t, map[int]map[string]float64{0: {"tensors": 5}}, rt.MemoryUsed.CoreMemory)
	assert.Equal(t, 1.5/100, *rt.VCPUUsage.User, "percentages become fractions")
	assert.Equal(t, 0.5/100, *rt.VCPUUsage.System)
}

func TestReleaseDrift(t *testing.T) {
	doc := `{"neuron_runtime_data":[{"pid":7,"neuron_runtime_tag":1234,"report":{
		"neuroncore_counters":{"neuroncores_in_use":{"3":{"neuroncore_utilization":50,"effective_flops":100},"4":{"neuroncore_utilization":10,"flops":7,"effective_flops":9,"v3d":{"nc_v3.8":{"neuroncore_utilization":9}}}}},
		"inference_stats":{"period":5,"error_summary":{"numeric":1},"inference_summary":{"completed":3},"latency_stats":{"total_latency":null,"device_latency":null}}}},
		{"pid":8,"report":{}}]}`
	r, problems, err := Decode([]byte(doc))
	require.NoError(t, err)
	assert.Empty(t, problems)
	require.Len(t, r.Runtimes, 2)
	rt := r.Runtimes[0]
	assert.Equal(t, "1234", rt.Tag, "a numeric tag is kept as text")
	core3 := rt.NeuronCoreCounters.Cores[3]
	require.NotNil(t, core3.Flops)
	assert.Equal(t, 100.0, *core3.Flops, "effective_flops where flops is missing")
	assert.Equal(t, 50.0/100, *core3.Utilization, "utilization becomes a fraction")
	assert.Equal(t, 7.0, *rt.NeuronCoreCounters.Cores[4].Flops, "flops wins when both are present")
	require.NotNil(t, rt.ExecutionStats)
	assert.Equal(t, map[string]float64{"completed": 3}, rt.ExecutionStats.Outcomes())
	assert.Nil(t, rt.ExecutionStats.LatencyStats.Total)
	assert.Equal(t, "8", r.Runtimes[1].Tag, "the pid is the tag when none is set")
}

func TestBadCoreIndex(t *testing.T) {
	_, problems, err := Decode([]byte(`{"neuron_runtime_data":[{"pid":1,"report":{"neuroncore_counters":{"neuroncores_in_use":{"nc0":{}}}}}]}`))
	require.NoError(t, err)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0].Error(), `NeuronCore index "nc0" is not an integer`)
}

func TestInteger(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want int64
		ok   bool
	}{{3, 3, true}, {-2, -2, true}, {1.5, 0, false}, {1e30, 0, false}} {
		got, ok := Integer(c.in)
		assert.Equal(t, c.ok, ok, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

// FuzzDecode: any input either fails with an error or yields a report
// whose problems all carry a key and an error.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"neuron_runtime_data":[{"pid":1,"report":{"memory_used":{"neuron_runtime_used_bytes":{"usage_breakdown":{"neuroncore_memory_usage":{"0":{"x":1}}}}}}}]}`))
	f.Add([]byte(`{"system_data":{"neuron_hw_counters":{"neuron_devices":[{"neuron_device_index":0}]}}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, problems, err := Decode(doc)
		if err != nil {
			if r != nil {
				t.Fatal("a report and an error")
			}
			return
		}
		for _, p := range problems {
			if p.Key == "" || p.Err == nil {
				t.Fatalf("problem %#v", p)
			}
		}
	})
}
