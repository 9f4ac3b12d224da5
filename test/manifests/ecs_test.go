package manifests

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

func decodeStrict(t *testing.T, file string, into any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(distDir(), "ecs", file))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s does not decode as the ECS API input: %v", file, err)
	}
}

func TestECSDaemonTaskDefinition(t *testing.T) {
	var td ecs.RegisterTaskDefinitionInput
	decodeStrict(t, "task-definition.json", &td)
	var svc ecs.CreateServiceInput
	decodeStrict(t, "service.json", &svc)

	if svc.SchedulingStrategy != types.SchedulingStrategyDaemon {
		t.Errorf("the service must be a DAEMON service, got %q", svc.SchedulingStrategy)
	}
	if svc.TaskDefinition == nil || *svc.TaskDefinition != *td.Family {
		t.Errorf("the service runs %v, the task definition family is %v", svc.TaskDefinition, td.Family)
	}
	if td.PidMode != types.PidModeHost {
		t.Error("pidMode host is needed to map GPU process ids to tasks")
	}
	volumes := map[string]string{}
	for _, v := range td.Volumes {
		if v.Host == nil || v.Host.SourcePath == nil {
			t.Errorf("volume %s has no host path", *v.Name)
			continue
		}
		volumes[*v.Name] = *v.Host.SourcePath
	}
	if len(td.ContainerDefinitions) != 1 {
		t.Fatalf("want one container, got %d", len(td.ContainerDefinitions))
	}
	c := td.ContainerDefinitions[0]
	if c.Image == nil || !strings.Contains(*c.Image, ":") || strings.HasSuffix(*c.Image, ":latest") {
		t.Errorf("image must be pinned: %v", c.Image)
	}
	if c.Image != nil && !strings.HasPrefix(*c.Image, "ghcr.io/otelcol-accel/otelcol-accel-agent:") {
		t.Errorf("the ECS daemon runs the node agent's image (ghcr.io/otelcol-accel/otelcol-accel-agent), not %q", *c.Image)
	}
	mounts := map[string]string{}
	for _, m := range c.MountPoints {
		if _, ok := volumes[*m.SourceVolume]; !ok {
			t.Errorf("mount %s uses undeclared volume %s", *m.ContainerPath, *m.SourceVolume)
		}
		mounts[*m.ContainerPath] = *m.SourceVolume
	}
	env := map[string]string{}
	for _, kv := range c.Environment {
		env[*kv.Name] = *kv.Value
	}
	// MPS-shared GPUs: the daemon's pipe directory must be the host's.
	pipe := env["CUDA_MPS_PIPE_DIRECTORY"]
	if v, ok := mounts[pipe]; !ok || volumes[v] != pipe {
		t.Errorf("CUDA_MPS_PIPE_DIRECTORY %q must be the host's MPS pipe directory, mounted at the same path", pipe)
	}
	// The ECS source reads GPU assignments from the Docker API.
	if sock := env["OTELCOL_ACCEL_DOCKER_SOCKET"]; mounts[sock] == "" {
		t.Errorf("the Docker socket %q is not mounted", sock)
	}
	if lib := env["OTELCOL_ACCEL_NVML_LIBRARY"]; lib != "" && mounts[filepath.Dir(lib)] == "" {
		t.Errorf("NVML library %s is not on a mounted host directory", lib)
	}
	if dir := env["OTELCOL_ACCEL_STORAGE_DIR"]; mounts[dir] == "" {
		t.Errorf("storage dir %s is not mounted", dir)
	}
	if c.Memory == nil || c.MemoryReservation == nil {
		t.Error("set memory (hard limit) and memoryReservation from the benchmarks")
	}
}
