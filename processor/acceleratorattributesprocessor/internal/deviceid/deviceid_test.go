package deviceid

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParse(t *testing.T) {
	const gpu = "GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e5f"
	const migUUID = "MIG-4f5e6d7c-8b9a-5c4d-8e3f-2a1b0c9d8e7f"
	tests := []struct {
		raw  string
		want ID
	}{
		{gpu, ID{Form: FormGPU, UUID: gpu, Index: -1, GI: -1, Replica: -1}},
		{gpu + "::3", ID{Form: FormGPU, UUID: gpu, Index: -1, GI: -1, Replica: 3}},
		{migUUID, ID{Form: FormMIG, UUID: migUUID, Index: -1, GI: -1, Replica: -1}},
		{migUUID + "::0", ID{Form: FormMIG, UUID: migUUID, Index: -1, GI: -1, Replica: 0}},
		{"MIG-" + gpu + "/7/0", ID{Form: FormMIGLegacy, UUID: gpu, Index: -1, GI: 7, Replica: -1}},
		{"nvidia0", ID{Form: FormGKE, Index: 0, GI: -1, Replica: -1}},
		{"nvidia3/gi5", ID{Form: FormGKE, Index: 3, GI: 5, Replica: -1}},
		{"nvidia1/vgpu2", ID{Form: FormGKE, Index: 1, GI: -1, Replica: 2}},
		{"nvidia1/gi2/vgpu4", ID{Form: FormGKE, Index: 1, GI: 2, Replica: 4}},
		{"12", ID{Form: FormIndex, Index: 12, GI: -1, Replica: -1}},
		// Not ours, or broken: kept raw so they can only match an identical hw.id.
		{"0000:3b:00.0", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{gpu + "::x", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{gpu + "::", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"GPU-", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"nvidia", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"nvidia1/vgpu2/gi3", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"nvidia1/gi1/gi2", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"nvidia1/foo", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"MIG-GPU-abc/1", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"-1", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"+1", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"GPU-a b", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
		{"99999999999999999999", ID{Form: FormOther, Index: -1, GI: -1, Replica: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			tt.want.Raw = tt.raw
			assert.Equal(t, tt.want, Parse(tt.raw))
		})
	}
	assert.True(t, Parse(gpu+"::0").Shared())
	assert.False(t, Parse(gpu).Shared())
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"GPU-1234::2", "MIG-abcd", "MIG-GPU-aa/1/0", "nvidia0/gi1/vgpu2", "7", "", "::", "nvidia/gi/vgpu"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		id := Parse(raw)
		if id.Raw != raw {
			t.Fatalf("raw not kept")
		}
		switch id.Form {
		case FormGPU, FormMIG:
			if id.UUID == "" || len(id.UUID) > len(raw) {
				t.Fatalf("%q: bad uuid %q", raw, id.UUID)
			}
		case FormMIGLegacy:
			if id.GI < 0 || id.UUID == "" {
				t.Fatalf("%q: legacy MIG without GI or parent", raw)
			}
		case FormGKE, FormIndex:
			if id.Index < 0 {
				t.Fatalf("%q: negative index", raw)
			}
		case FormOther:
			if id.UUID != "" || id.Index != -1 || id.GI != -1 || id.Replica != -1 {
				t.Fatalf("%q: FormOther with parsed fields %+v", raw, id)
			}
		}
	})
}
