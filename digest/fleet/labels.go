package fleet

import (
	"strings"
)

// dcgm-exporter metric names (docs/digest.md §1.1). Memory is in MiB; there
// is no total-memory metric by default, so capacity = used + free (+ reserved).
const (
	MetricFBUsed       = "DCGM_FI_DEV_FB_USED"
	MetricFBFree       = "DCGM_FI_DEV_FB_FREE"
	MetricFBReserved   = "DCGM_FI_DEV_FB_RESERVED"
	MetricEngineActive = "DCGM_FI_PROF_GR_ENGINE_ACTIVE" // ratio 0..1, works on MIG
	MetricGPUUtil      = "DCGM_FI_DEV_GPU_UTIL"          // percent, coarse, not on MIG
)

// Label names dcgm-exporter writes (docs/digest.md §1.2).
const (
	labelUUID       = "UUID"
	labelGPU        = "gpu"
	labelModel      = "modelName"
	labelMIGID      = "GPU_I_ID"
	labelMIGProfile = "GPU_I_PROFILE"
	labelHPCJob     = "hpc_job"
	labelInstance   = "instance"
)

// workloadLabels name the job a pod belongs to when several pods make one
// job, in order of preference. A plain `job` label is never read: Prometheus
// sets it to the scrape job, so a pod's own `job` label only survives as
// `exported_job` when the exporter is scraped with honorLabels: false.
var workloadLabels = []string{"workload", "exported_workload", "exported_job"}

// labelScheme is how this Prometheus spells owners (docs/digest.md §1.2).
type labelScheme struct {
	// exported is true when the workload labels arrive as exported_namespace/
	// exported_pod (ServiceMonitor honorLabels: false); namespace/pod then
	// name the exporter pod and must not be read as the owner.
	exported bool
}

func detectScheme(sets ...[]Series) labelScheme {
	for _, set := range sets {
		for _, s := range set {
			if s.Labels["exported_namespace"] != "" || s.Labels["exported_pod"] != "" {
				return labelScheme{exported: true}
			}
		}
	}
	return labelScheme{}
}

// hostOf returns the host and the label it came from: "hostname" since
// dcgm-exporter renamed it, "Hostname" before, else Prometheus' "instance"
// without its port.
func hostOf(l map[string]string) (host, label string) {
	for _, name := range []string{"hostname", "Hostname"} {
		if v := l[name]; v != "" {
			return v, name
		}
	}
	inst := l[labelInstance]
	if h, _, ok := strings.Cut(inst, ":"); ok && h != "" && !strings.Contains(h, "[") {
		inst = h
	}
	return inst, labelInstance
}

func (ls labelScheme) ownerOf(l map[string]string) Owner {
	o := Owner{HPCJob: l[labelHPCJob]}
	if ls.exported {
		o.Namespace, o.Pod, o.Container = l["exported_namespace"], l["exported_pod"], l["exported_container"]
	} else {
		o.Namespace, o.Pod, o.Container = l["namespace"], l["pod"], l["container"]
		// Scraped without any workload mapping, namespace/pod can only be
		// the exporter's own pod: that is not an owner.
		if strings.Contains(o.Pod, "dcgm-exporter") {
			o.Namespace, o.Pod, o.Container = "", "", ""
		}
	}
	for _, name := range workloadLabels {
		if name == "exported_job" && !ls.exported {
			continue
		}
		if v := l[name]; v != "" {
			o.Workload = v
			break
		}
	}
	if o.Pod == "" && o.Workload == "" {
		// A namespace alone (or a container alone) names no workload.
		o.Namespace, o.Container = "", ""
		if o.HPCJob == "" {
			return Owner{}
		}
	}
	return o
}

// gpuKeyOf is the identity of the GPU (or MIG instance) a series is about:
// its UUID, which survives pod churn, exporter upgrades and host relabelling.
// Without a UUID (a relabelled or non-standard exporter) the host and index
// stand in for it.
func gpuKeyOf(l map[string]string, host string) GPUKey {
	k := GPUKey{UUID: l[labelUUID], MIGInstance: l[labelMIGID]}
	if k.UUID == "" {
		k.Host, k.Index = host, l[labelGPU]
	}
	return k
}

// seriesID identifies one series across the range queries: every label but
// the metric name, in a fixed order. The USED, FREE and RESERVED series of one
// exporter sample share it, which is what lets capacity be summed per sample.
func seriesID(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	sortStrings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}
