package fleet

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
)

// Labels every simulated pod carries, so the attributes processor can be
// configured to read team and workload from them.
const (
	LabelTeam         = "team"
	LabelWorkload     = "app.kubernetes.io/name"
	LabelWorkloadType = "otelcol-accel.io/workload-type"
)

// WorkloadType is the accelerator.workload.type a profile stands for.
func WorkloadType(profile string) string {
	switch {
	case scenario.IsTraining(profile):
		return "training"
	case scenario.IsInference(profile):
		return "inference"
	case profile == scenario.ProfileIdle:
		return "interactive"
	}
	return ""
}

// workloadName is the name at the top of the pod's owner chain.
func workloadName(sp *scenario.Pod) string {
	if sp.Owner != nil {
		return sp.Owner.Name
	}
	return sp.Name
}

// rsHashAlphabet is the alphabet of ReplicaSet pod-template hashes.
const rsHashAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// ownerChain builds the controllers Kubernetes would create for the owner
// kind, from the pod's direct owner upwards.
func ownerChain(seed uint64, sp *scenario.Pod) []OwnerRef {
	o := sp.Owner
	if o == nil {
		return nil
	}
	uid := func(kind, name string) string { return detrand.UUID(seed, "owner", sp.Namespace, kind, name) }
	switch o.Kind {
	case scenario.OwnerDeployment:
		hash := podTemplateHash(sp.Name, o.Name)
		if hash == "" {
			hash = detrand.Pick(10, rsHashAlphabet, seed, "rs", sp.Namespace, o.Name)
		}
		rs := o.Name + "-" + hash
		return []OwnerRef{
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: uid("ReplicaSet", rs), PodLabels: map[string]string{"pod-template-hash": hash}},
			{APIVersion: "apps/v1", Kind: "Deployment", Name: o.Name, UID: uid("Deployment", o.Name)},
		}
	case scenario.OwnerStatefulSet:
		return []OwnerRef{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: o.Name, UID: uid("StatefulSet", o.Name),
			PodLabels: map[string]string{
				"statefulset.kubernetes.io/pod-name": sp.Name,
				"controller-revision-hash":           o.Name + "-" + detrand.Pick(10, rsHashAlphabet, seed, "sts", sp.Namespace, o.Name),
			}}}
	case scenario.OwnerJob:
		return []OwnerRef{jobRef(o.Name, uid("Job", o.Name))}
	case scenario.OwnerCronJob:
		job := fmt.Sprintf("%s-%d", o.Name, 29400000+detrand.Hash(seed, "cron", o.Name)%100000)
		return []OwnerRef{
			jobRef(job, uid("Job", job)),
			{APIVersion: "batch/v1", Kind: "CronJob", Name: o.Name, UID: uid("CronJob", o.Name)},
		}
	case scenario.OwnerLeaderWorkerSet:
		worker := strconv.Itoa(int(detrand.Hash(seed, "lws-worker", sp.Namespace, sp.Name) % 8))
		return []OwnerRef{
			{APIVersion: "apps/v1", Kind: "StatefulSet", Name: o.Name, UID: uid("StatefulSet", o.Name), PodLabels: map[string]string{
				"leaderworkerset.sigs.k8s.io/name":         o.Name,
				"leaderworkerset.sigs.k8s.io/group-index":  "0",
				"leaderworkerset.sigs.k8s.io/worker-index": worker,
			}},
			{APIVersion: "leaderworkerset.x-k8s.io/v1", Kind: "LeaderWorkerSet", Name: o.Name, UID: uid("LeaderWorkerSet", o.Name)},
		}
	}
	return nil
}

func jobRef(name, uid string) OwnerRef {
	return OwnerRef{APIVersion: "batch/v1", Kind: "Job", Name: name, UID: uid, PodLabels: map[string]string{
		"batch.kubernetes.io/job-name":       name,
		"job-name":                           name,
		"batch.kubernetes.io/controller-uid": uid,
		"controller-uid":                     uid,
	}}
}

// podTemplateHash reads the ReplicaSet hash from a pod named as a
// Deployment's pods are ("<deployment>-<hash>-<suffix>"), so the owner
// chain agrees with the name; "" when the name does not have that form.
func podTemplateHash(pod, deployment string) string {
	rest, ok := strings.CutPrefix(pod, deployment+"-")
	if !ok {
		return ""
	}
	hash, suffix, ok := strings.Cut(rest, "-")
	if !ok || len(hash) < 6 || len(hash) > 10 || len(suffix) != 5 || strings.Contains(suffix, "-") {
		return ""
	}
	return hash
}
