package manifests

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The agents' collector runs privileged for one reason, the kernel log
// (opening /dev/kmsg needs the device allowed by the device cgroup and
// CAP_SYSLOG): only the agents, only while the kernel log is on, with a
// read-only root file system and a read-only mount of exactly /dev/kmsg.
// With agents.kernelLog.enabled: false nothing of it is left, and the
// receivers are told to read no kernel log.
func TestAgentsArePrivilegedOnlyForTheKernelLog(t *testing.T) {
	all := renderAll(t)
	for _, c := range helmCases(t) {
		r, _ := renderHelmCase(t, c)
		all = append(all, r)
	}
	for _, r := range all {
		checkSecurity(t, r, true)
	}
	objs, _, err := renderHelm(nil, map[string]any{"region": "eu-west-1", "agents.kernelLog.enabled": false})
	if err != nil {
		t.Fatal(err)
	}
	off := sortObjects("helm agents.kernelLog.enabled=false", objs)
	if len(off.daemonSets) == 0 {
		t.Fatal("no agent DaemonSets rendered")
	}
	checkSecurity(t, off, false)
}

func checkSecurity(t *testing.T, r rendered, kernelLog bool) {
	t.Helper()
	for name, spec := range podSpecs(r.daemonSets, r.deployments) {
		where := r.root + " " + name
		c, ok := findContainer(spec, "otelcol-accel")
		if !ok {
			t.Errorf("%s: no otelcol-accel container", where)
			continue
		}
		sc := c.SecurityContext
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: the collector's root file system must be read-only", where)
		}
		privileged := sc != nil && sc.Privileged != nil && *sc.Privileged
		isAgent := strings.HasPrefix(name, "DaemonSet/")
		kmsgMount, hasMount := mountAt(c, "/dev/kmsg")
		kmsgVolume := false
		for _, v := range spec.Volumes {
			if v.HostPath != nil && v.HostPath.Path == "/dev/kmsg" {
				kmsgVolume = true
				if v.HostPath.Type == nil || *v.HostPath.Type != corev1.HostPathCharDev {
					t.Errorf("%s: the /dev/kmsg hostPath must be of type CharDevice", where)
				}
			}
		}
		env := containerEnv(c)
		if isAgent && kernelLog {
			if !privileged {
				t.Errorf("%s: the agent must be privileged to open /dev/kmsg", where)
			}
			if sc != nil && sc.AllowPrivilegeEscalation != nil {
				t.Errorf("%s: allowPrivilegeEscalation beside privileged: true is refused by Kubernetes (false) or pointless (true)", where)
			}
			if !hasMount || !kmsgMount.ReadOnly || !kmsgVolume {
				t.Errorf("%s: /dev/kmsg must be mounted read-only from the host", where)
			}
			if v, ok := env["OTELCOL_ACCEL_KERNEL_LOG"]; ok && v != "kmsg" {
				t.Errorf("%s: OTELCOL_ACCEL_KERNEL_LOG=%s, but /dev/kmsg is mounted for it", where, v)
			}
			continue
		}
		if privileged {
			t.Errorf("%s: privileged without the kernel log", where)
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: allowPrivilegeEscalation must be false", where)
		}
		if hasMount || kmsgVolume {
			t.Errorf("%s: /dev/kmsg mounted without the kernel log", where)
		}
		if isAgent && env["OTELCOL_ACCEL_KERNEL_LOG"] != "none" {
			t.Errorf("%s: with the kernel log off, OTELCOL_ACCEL_KERNEL_LOG must be none, is %q", where, env["OTELCOL_ACCEL_KERNEL_LOG"])
		}
	}
}

// mountAt is the container's mount at exactly p.
func mountAt(c corev1.Container, p string) (corev1.VolumeMount, bool) {
	for _, m := range c.VolumeMounts {
		if m.MountPath == p {
			return m, true
		}
	}
	return corev1.VolumeMount{}, false
}
