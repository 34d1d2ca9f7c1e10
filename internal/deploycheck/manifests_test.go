package deploycheck

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	promlabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
	yamlv2 "go.yaml.in/yaml/v2"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// The files of deploy/kubernetes that are not Kubernetes objects, and the
// suffix of the Secret examples, which an operator copies rather than
// applies.
const (
	kustomizationFile = "kustomization.yaml"
	// seedDir is the directory of the seed Job, beside the files of
	// deploy/kubernetes and outside its kustomization: a kustomization of
	// its own, applied once, by hand.
	seedDir          = "seed"
	scrapeConfigFile = "prometheus-scrape.yaml"
	exampleSuffix    = ".example.yaml"
	containerName    = "inventory-server"
	serverModule     = "github.com/petinventory/petinventory/server"
	// metricsAddrSetting serves /metrics on an address of its own, when
	// the server has it; the NetworkPolicy then opens that port to the
	// monitoring namespace alone.
	metricsAddrSetting  = "INVENTORY_METRICS_ADDR"
	monitoringNamespace = "monitoring"
)

// manifests is deploy/kubernetes, decoded, with its seed/ directory.
type manifests struct {
	objectFiles     []string // the files holding an object that is applied, sorted
	deployment      *appsv1.Deployment
	services        []*corev1.Service
	serviceAccounts []*corev1.ServiceAccount
	pdbs            []*policyv1.PodDisruptionBudget
	policies        []*networkingv1.NetworkPolicy
	secrets         map[string]*corev1.Secret // the examples, by name
	jobs            []*batchv1.Job
	configMaps      []*corev1.ConfigMap
	kustomization   kustomization
	scrape          scrapeConfig
	relabel         [][]*relabel.Config // each scrape configuration's relabel_configs, as Prometheus reads them

	// The seed Job's directory: its objects (in jobs and configMaps
	// above) and its kustomization.
	seedFiles         []string
	seedKustomization kustomization
}

// kustomization is the part of kustomize's Kustomization the directory
// uses; a field it does not use is refused, so that a new one is checked
// here before it is relied on.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// scrapeConfig is the part of a Prometheus configuration the checks read;
// promtool validates the whole file.
type scrapeConfig struct {
	ScrapeConfigs []struct {
		JobName      string `json:"job_name"`
		MetricsPath  string `json:"metrics_path"`
		DNSSDConfigs []struct {
			Names []string `json:"names"`
			Type  string   `json:"type"`
			Port  int      `json:"port"`
		} `json:"dns_sd_configs"`
	} `json:"scrape_configs"`
}

// decodeObject decodes one Kubernetes object strictly into its k8s.io/api
// type: an unknown field, a field given twice or a value of the wrong type
// is an error, as is a kind this test does not know.
func decodeObject(data []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "networking.k8s.io/v1 NetworkPolicy":
		obj = &networkingv1.NetworkPolicy{}
	default:
		return nil, fmt.Errorf("apiVersion %q, kind %q: not a kind the test of deploy/kubernetes decodes (add it there)", tm.APIVersion, tm.Kind)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// readManifests reads and strictly decodes every file of dir, and of its
// seed directory.
func readManifests(dir string) (*manifests, error) {
	m := &manifests{secrets: map[string]*corev1.Secret{}}
	errs := m.readDir(dir, &m.objectFiles, &m.kustomization)
	if _, err := os.Stat(filepath.Join(dir, seedDir)); err == nil {
		errs = append(errs, m.readDir(filepath.Join(dir, seedDir), &m.seedFiles, &m.seedKustomization)...)
	}
	if m.deployment == nil {
		errs = append(errs, fmt.Errorf("%s holds no Deployment", dir))
	}
	return m, errors.Join(errs...)
}

// readDir reads the files of one directory into m: its objects (their
// file names into files, sorted), its kustomization, the Secret examples
// and the scrape configuration.
func (m *manifests) readDir(dir string, files *[]string, k *kustomization) []error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".yaml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return append(errs, err)
		}
		switch name {
		case kustomizationFile:
			if err := yaml.UnmarshalStrict(data, k); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
			continue
		case scrapeConfigFile:
			if err := m.readScrape(data); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
			continue
		}
		obj, err := decodeObject(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		if strings.HasSuffix(name, exampleSuffix) {
			s, ok := obj.(*corev1.Secret)
			if !ok {
				errs = append(errs, fmt.Errorf("%s: an example must be a Secret (the only objects an operator fills in)", name))
				continue
			}
			m.secrets[s.Name] = s
			continue
		}
		*files = append(*files, name)
		if err := m.add(obj); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	sort.Strings(*files)
	return errs
}

// readScrape reads the scrape configuration: the fields the checks read,
// and each job's relabel_configs as Prometheus's own relabelling reads
// them (its YAML decoder, its defaults, its validation).
func (m *manifests) readScrape(data []byte) error {
	if err := yaml.Unmarshal(data, &m.scrape); err != nil {
		return err
	}
	var raw struct {
		ScrapeConfigs []struct {
			RelabelConfigs []*relabel.Config `yaml:"relabel_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yamlv2.Unmarshal(data, &raw); err != nil {
		return err
	}
	m.relabel = nil
	for _, sc := range raw.ScrapeConfigs {
		for _, c := range sc.RelabelConfigs {
			if err := c.Validate(model.UTF8Validation); err != nil {
				return err
			}
		}
		m.relabel = append(m.relabel, sc.RelabelConfigs)
	}
	return nil
}

// add files an applied object by its kind.
func (m *manifests) add(obj any) error {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		if m.deployment != nil {
			return errors.New("a second Deployment")
		}
		m.deployment = o
	case *corev1.Service:
		m.services = append(m.services, o)
	case *corev1.ServiceAccount:
		m.serviceAccounts = append(m.serviceAccounts, o)
	case *policyv1.PodDisruptionBudget:
		m.pdbs = append(m.pdbs, o)
	case *networkingv1.NetworkPolicy:
		m.policies = append(m.policies, o)
	case *batchv1.Job:
		m.jobs = append(m.jobs, o)
	case *corev1.ConfigMap:
		m.configMaps = append(m.configMaps, o)
	case *corev1.Secret:
		return fmt.Errorf("a Secret outside an example (%s) would be applied with its placeholders", exampleSuffix)
	}
	return nil
}

// facts is what the rest of the repository says that the manifests must
// agree with.
type facts struct {
	settings        map[string]string // environment variable → default, from inventory-server -h
	image           string            // the image's name, scripts/release/image.sh's default
	uid, gid        int64             // the image's user
	version         string            // the server module's version, versions.yaml
	failoverSeconds int               // the longest failover window docs/SECURITY.md states
}

// settingsFromUsage reads the settings table of inventory-server -h: per
// environment variable, its default.
func settingsFromUsage(usage string) (map[string]string, error) {
	settings := map[string]string{}
	lines := strings.Split(usage, "\n")
	start := slices.IndexFunc(lines, func(l string) bool {
		f := strings.Fields(l)
		return len(f) >= 3 && f[0] == "FLAG" && f[1] == "ENVIRONMENT" && f[2] == "DEFAULT"
	})
	if start < 0 {
		return nil, errors.New("inventory-server -h has no settings table (a FLAG ENVIRONMENT DEFAULT header)")
	}
	columns := regexp.MustCompile(`\s{2,}`)
	for _, l := range lines[start+1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		f := columns.Split(strings.TrimSpace(l), 4)
		if len(f) < 4 {
			return nil, fmt.Errorf("inventory-server -h: a settings row without four columns: %q", l)
		}
		if f[1] != "-" {
			settings[f[1]] = f[2]
		}
	}
	if len(settings) == 0 {
		return nil, errors.New("inventory-server -h: the settings table names no environment variable")
	}
	return settings, nil
}

// imageFacts reads scripts/release/image.sh: the image's default name and
// the user its Containerfile runs as.
func imageFacts(script string) (image string, uid, gid int64, err error) {
	name := regexp.MustCompile(`(?m)^image=\$\{IMAGE:-([^}]+)\}`).FindStringSubmatch(script)
	user := regexp.MustCompile(`(?m)^USER (\d+):(\d+)$`).FindStringSubmatch(script)
	if name == nil || user == nil {
		return "", 0, 0, errors.New("scripts/release/image.sh: no image=${IMAGE:-NAME} line or no USER UID:GID line in its Containerfile")
	}
	uid, _ = strconv.ParseInt(user[1], 10, 64)
	gid, _ = strconv.ParseInt(user[2], 10, 64)
	return name[1], uid, gid, nil
}

// moduleVersion is the version versions.yaml releases module at.
func moduleVersion(versions []byte, module string) (string, error) {
	var doc struct {
		ModuleSets map[string]struct {
			Version string   `json:"version"`
			Modules []string `json:"modules"`
		} `json:"module-sets"`
	}
	if err := yaml.Unmarshal(versions, &doc); err != nil {
		return "", fmt.Errorf("versions.yaml: %w", err)
	}
	for _, set := range doc.ModuleSets {
		if slices.Contains(set.Modules, module) {
			return set.Version, nil
		}
	}
	return "", fmt.Errorf("versions.yaml releases no %s", module)
}

// failoverWindow is the longest failover window docs/SECURITY.md states,
// in whole seconds: the detection and promotion time it gives for
// production ("typically 5–30 s in production") plus the second it adds
// ("plus well under a second").
func failoverWindow(security string) (int, error) {
	m := regexp.MustCompile(`typically\s+(\d+)[–-](\d+)\s+s\s+in\s+production\)\s+plus\s+well\s+under\s+a\s+second`).FindStringSubmatch(security)
	if m == nil {
		return 0, errors.New(`docs/SECURITY.md#failover no longer says "typically N–M s in production) plus well under a second": update failoverWindow to read the window it states`)
	}
	hi, _ := strconv.Atoi(m[2])
	return hi + 1, nil
}

// container is the server's container of the Deployment.
func (m *manifests) container() (*corev1.Container, error) {
	for i, c := range m.deployment.Spec.Template.Spec.Containers {
		if c.Name == containerName {
			return &m.deployment.Spec.Template.Spec.Containers[i], nil
		}
	}
	return nil, fmt.Errorf("the Deployment has no container named %s", containerName)
}

// env is the value the container gives name, else the server's default.
func env(c *corev1.Container, f facts, name string) string {
	if v, ok := containerEnv(c, name); ok {
		return v
	}
	return f.settings[name]
}

// containerEnv is the value the container gives name, if it does.
func containerEnv(c *corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// listenPort is the port the server listens on with the container's
// settings (ADDR, else its default).
func listenPort(c *corev1.Container, f facts) (int32, error) {
	return addrPort("ADDR", env(c, f, "ADDR"))
}

// metricsPort is the port the server serves /metrics on: that of
// metricsAddrSetting when the container sets it (a server that has the
// setting serves the metrics there alone), else the API's.
func metricsPort(c *corev1.Container, api int32) (int32, error) {
	if addr, ok := containerEnv(c, metricsAddrSetting); ok && addr != "" {
		return addrPort(metricsAddrSetting, addr)
	}
	return api, nil
}

func addrPort(setting, addr string) (int32, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", setting, addr, err)
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s %q: not a numeric port", setting, addr)
	}
	return int32(n), nil
}

// portByNumber is the container port numbered n.
func portByNumber(c *corev1.Container, n int32) (corev1.ContainerPort, bool) {
	for _, p := range c.Ports {
		if p.ContainerPort == n {
			return p, true
		}
	}
	return corev1.ContainerPort{}, false
}

// onlyFromMonitoring reports whether an ingress rule admits only pods of
// the monitoring namespace.
func onlyFromMonitoring(r networkingv1.NetworkPolicyIngressRule) bool {
	if len(r.From) == 0 {
		return false // from anywhere
	}
	for _, peer := range r.From {
		if peer.IPBlock != nil || peer.NamespaceSelector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set{"kubernetes.io/metadata.name": monitoringNamespace}) ||
			sel.Matches(labels.Set{"kubernetes.io/metadata.name": "default"}) {
			return false
		}
	}
	return true
}

// admits reports whether an ingress rule lets traffic reach port p.
func admits(r networkingv1.NetworkPolicyIngressRule, p corev1.ContainerPort) bool {
	if len(r.Ports) == 0 {
		return true // every port
	}
	for _, rp := range r.Ports {
		if rp.Port == nil || (rp.Port.Type == intstr.String && rp.Port.StrVal == p.Name) ||
			(rp.Port.Type == intstr.Int && rp.Port.IntVal == p.ContainerPort) {
			return true
		}
	}
	return false
}

// namedPort is the container port named name.
func namedPort(c *corev1.Container, name string) (corev1.ContainerPort, bool) {
	for _, p := range c.Ports {
		if p.Name == name {
			return p, true
		}
	}
	return corev1.ContainerPort{}, false
}

// probeBudget is how long a probe may fail before Kubernetes acts on it,
// with Kubernetes's defaults (10 s, 3 failures) for unset fields: the
// kubelet acts at the failureThreshold-th failure in a row, which comes
// (failureThreshold − 1) × periodSeconds after the first (a probe that
// starts failing just after a success fails at once, not a period later).
func probeBudget(p *corev1.Probe) int {
	period, failures := p.PeriodSeconds, p.FailureThreshold
	if period == 0 {
		period = 10
	}
	if failures == 0 {
		failures = 3
	}
	return int(period * (failures - 1))
}

// secretFile is the Secret example and its key that a file path in the
// container names through a secret volume mount, or an error when the
// path is under no such mount or the example holds no such key.
func (m *manifests) secretFile(c *corev1.Container, file string) (volume string, secret *corev1.Secret, key string, err error) {
	return m.secretFileIn(m.deployment.Spec.Template.Spec.Volumes, c, file)
}

// secretFileIn is secretFile for a container of a pod with volumes.
func (m *manifests) secretFileIn(volumes []corev1.Volume, c *corev1.Container, file string) (volume string, secret *corev1.Secret, key string, err error) {
	for _, vm := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(path.Clean(file), strings.TrimSuffix(vm.MountPath, "/")+"/")
		if !ok {
			continue
		}
		if vm.SubPath != "" {
			return "", nil, "", fmt.Errorf("%s is mounted with subPath, which Kubernetes never updates: rotation would not reach the pod", vm.MountPath)
		}
		if !vm.ReadOnly {
			return "", nil, "", fmt.Errorf("the mount %s of %s is not readOnly", vm.MountPath, file)
		}
		for _, v := range volumes {
			if v.Name != vm.Name {
				continue
			}
			if v.Secret == nil {
				return "", nil, "", fmt.Errorf("%s is on volume %s, which is not a Secret", file, v.Name)
			}
			s := m.secrets[v.Secret.SecretName]
			if s == nil {
				return "", nil, "", fmt.Errorf("%s is on Secret %s, which has no example (*%s)", file, v.Secret.SecretName, exampleSuffix)
			}
			_, inData := s.Data[rel]
			_, inString := s.StringData[rel]
			if !inData && !inString {
				return "", nil, "", fmt.Errorf("%s names key %q of Secret %s, whose example has no such key", file, rel, s.Name)
			}
			return v.Name, s, rel, nil
		}
		return "", nil, "", fmt.Errorf("volume mount %s names no volume", vm.Name)
	}
	return "", nil, "", fmt.Errorf("%s is under no volume mount of the container", file)
}

// secretData is a Secret example's value for key.
func secretData(s *corev1.Secret, key string) []byte {
	if v, ok := s.StringData[key]; ok {
		return []byte(v)
	}
	return s.Data[key]
}

// check reports every way m disagrees with f or with itself.
func check(m *manifests, f facts) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	// kustomization.yaml lists exactly the objects to apply, and
	// seed/kustomization.yaml exactly the seed Job's.
	errs = append(errs, checkKustomization(kustomizationFile, m.kustomization, m.objectFiles)...)
	errs = append(errs, checkKustomization(seedDir+"/"+kustomizationFile, m.seedKustomization, m.seedFiles)...)
	for _, r := range m.kustomization.Resources {
		if path.Clean(r) == seedDir || strings.HasPrefix(path.Clean(r), seedDir+"/") {
			bad("%s lists %s: every kubectl apply -k would run the seed again once its Job is gone, and write the initial stock into a store wiped meanwhile", kustomizationFile, r)
		}
	}
	if len(m.jobs) > 0 && len(m.seedFiles) == 0 {
		bad("the seed Job is not in %s/, its own kustomization", seedDir)
	}

	d := m.deployment
	c, err := m.container()
	if err != nil {
		return append(errs, err)
	}
	pod := d.Spec.Template.Spec
	podLabels := labels.Set(d.Spec.Template.Labels)
	selects := func(what string, sel *metav1.LabelSelector) {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || sel == nil || s.Empty() || !s.Matches(podLabels) {
			bad("%s: its selector %v does not select the Deployment's pods (%v)", what, sel, podLabels)
		}
	}
	selects("Deployment "+d.Name, d.Spec.Selector)

	// The image: image.sh's name, tagged at the server's version.
	if want := f.image + ":" + f.version; c.Image != want {
		bad("the container's image is %s, want %s (scripts/release/image.sh's name, at the server's version in versions.yaml)", c.Image, want)
	}

	// The image's user, non-root, read-only.
	runAs := func(pod, ctr *int64) *int64 {
		if ctr != nil {
			return ctr
		}
		return pod
	}
	psc, csc := pod.SecurityContext, c.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if csc == nil {
		csc = &corev1.SecurityContext{}
	}
	if u := runAs(psc.RunAsUser, csc.RunAsUser); u == nil || *u != f.uid {
		bad("the container runs as user %v, want the image's %d (scripts/release/image.sh)", deref(u), f.uid)
	}
	if g := runAs(psc.RunAsGroup, csc.RunAsGroup); g == nil || *g != f.gid {
		bad("the container runs as group %v, want the image's %d (scripts/release/image.sh)", deref(g), f.gid)
	}
	nonRoot := psc.RunAsNonRoot
	if csc.RunAsNonRoot != nil {
		nonRoot = csc.RunAsNonRoot
	}
	if nonRoot == nil || !*nonRoot {
		bad("runAsNonRoot is not true")
	}
	if csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem {
		bad("the container's root file system is not readOnlyRootFilesystem")
	}
	if csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation {
		bad("the container does not set allowPrivilegeEscalation: false")
	}

	// Every variable is a setting of the server; the keys come from a file.
	for _, e := range c.Env {
		if _, ok := f.settings[e.Name]; !ok {
			bad("environment variable %s is not a setting of inventory-server (-h lists them)", e.Name)
		}
		if e.ValueFrom != nil {
			bad("environment variable %s takes valueFrom; the server reads its secrets from files (mount the Secret and name the file)", e.Name)
		}
		if strings.HasSuffix(e.Name, "_FILE") {
			if _, _, _, err := m.secretFile(c, e.Value); err != nil {
				bad("%s=%s: %v", e.Name, e.Value, err)
			}
		}
	}
	if slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "INVENTORY_API_KEYS" }) ||
		!slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "INVENTORY_API_KEYS_FILE" }) {
		bad("the API keys must come from a mounted Secret's file: INVENTORY_API_KEYS_FILE, not INVENTORY_API_KEYS")
	}
	if v, _ := containerEnv(c, "REDIS_URL"); v == "" {
		bad("REDIS_URL is not set; the server needs it")
	}
	for _, v := range pod.Volumes {
		if v.Secret != nil && m.secrets[v.Secret.SecretName] == nil {
			bad("volume %s mounts Secret %s, which has no example", v.Name, v.Secret.SecretName)
		}
	}
	for name := range m.secrets {
		if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == name }) {
			bad("the example of Secret %s is mounted by no volume", name)
		}
	}

	// The probes: the server's paths, on the named port it listens on,
	// failing for longer than a failover lasts.
	port, err := listenPort(c, f)
	if err != nil {
		bad("%v", err)
	}
	for _, p := range []struct {
		what  string
		probe *corev1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			bad("the container has no %s with httpGet", p.what)
			continue
		}
		hp := p.probe.HTTPGet.Port
		cp, ok := namedPort(c, hp.StrVal)
		switch {
		case hp.Type != intstr.String:
			bad("%s's port is %s; name the container's port instead", p.what, hp.String())
		case !ok:
			bad("%s's port %q names no port of the container", p.what, hp.StrVal)
		case cp.ContainerPort != port:
			bad("%s's port %q is %d, but the server listens on %d (ADDR)", p.what, hp.StrVal, cp.ContainerPort, port)
		}
		if b := probeBudget(p.probe); b <= f.failoverSeconds {
			bad("%s's budget, (failureThreshold − 1) × periodSeconds = %d s, is not above the failover window of docs/SECURITY.md#failover (%d s)", p.what, b, f.failoverSeconds)
		}
	}
	if rp := c.ReadinessProbe; rp != nil {
		storeTimeout, err := time.ParseDuration(env(c, f, "INVENTORY_STORE_TIMEOUT"))
		timeout := time.Duration(max(rp.TimeoutSeconds, 1)) * time.Second
		if err != nil || timeout <= storeTimeout {
			bad("readinessProbe's timeoutSeconds (%v) is not above the store timeout /readyz spends (INVENTORY_STORE_TIMEOUT %s)", timeout, env(c, f, "INVENTORY_STORE_TIMEOUT"))
		}
	}

	// The Services, the budget and the policy select the pods and name
	// their ports.
	for _, s := range m.services {
		selects("Service "+s.Name, &metav1.LabelSelector{MatchLabels: s.Spec.Selector})
		for _, sp := range s.Spec.Ports {
			if _, ok := namedPort(c, sp.TargetPort.StrVal); sp.TargetPort.Type != intstr.String || !ok {
				bad("Service %s: targetPort %s names no port of the container", s.Name, sp.TargetPort.String())
			}
		}
	}
	if len(m.pdbs) == 0 {
		bad("no PodDisruptionBudget")
	}
	for _, b := range m.pdbs {
		selects("PodDisruptionBudget "+b.Name, b.Spec.Selector)
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		if b.Spec.MaxUnavailable == nil || b.Spec.MaxUnavailable.Type != intstr.Int || replicas-b.Spec.MaxUnavailable.IntVal < 2 {
			bad("PodDisruptionBudget %s: maxUnavailable %v of %d replicas leaves fewer than 2 serving during a drain", b.Name, b.Spec.MaxUnavailable, replicas)
		}
	}
	if len(m.policies) == 0 {
		bad("no NetworkPolicy")
	}
	for _, np := range m.policies {
		selects("NetworkPolicy "+np.Name, &np.Spec.PodSelector)
		for _, r := range np.Spec.Ingress {
			for _, p := range r.Ports {
				if p.Port == nil || p.Port.Type != intstr.String {
					bad("NetworkPolicy %s: an ingress port is not a name of the container's ports", np.Name)
				} else if _, ok := namedPort(c, p.Port.StrVal); !ok {
					bad("NetworkPolicy %s: ingress port %v names no port of the container", np.Name, p.Port)
				}
			}
		}
	}
	errs = append(errs, checkPlatform(m, f)...)
	errs = append(errs, checkSeedJob(m, f)...)
	if sa := pod.ServiceAccountName; sa != "" && !slices.ContainsFunc(m.serviceAccounts, func(s *corev1.ServiceAccount) bool { return s.Name == sa }) {
		bad("the pods' serviceAccountName %s is not among the objects", sa)
	}

	// The metrics' port: a port of the container; when it is not the
	// API's, every policy opens it to the monitoring namespace alone.
	mport, err := metricsPort(c, port)
	if err != nil {
		bad("%v", err)
	}
	metrics, ok := portByNumber(c, mport)
	if !ok {
		bad("the server serves /metrics on port %d, which is no port of the container", mport)
	}
	if ok && mport != port {
		open := false
		for _, np := range m.policies {
			for _, r := range np.Spec.Ingress {
				if !admits(r, metrics) {
					continue
				}
				if !onlyFromMonitoring(r) {
					bad("NetworkPolicy %s admits the metrics port %s from outside the %s namespace", np.Name, metrics.Name, monitoringNamespace)
				}
				open = true
			}
		}
		if !open {
			bad("no NetworkPolicy admits the metrics port %s from the %s namespace", metrics.Name, monitoringNamespace)
		}
	}

	// The scrape configuration and the annotations: the metrics' port,
	// the same path, every pod through a headless Service.
	ann := d.Spec.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != strconv.Itoa(int(mport)) || ann["prometheus.io/path"] == "" {
		bad("the pod template's prometheus.io annotations (%v) do not say scrape \"true\", port %d and a path", ann, mport)
	}
	if len(m.scrape.ScrapeConfigs) != 1 {
		bad("%s: %d scrape configurations, want one job", scrapeConfigFile, len(m.scrape.ScrapeConfigs))
	}
	for _, sc := range m.scrape.ScrapeConfigs {
		if sc.MetricsPath != ann["prometheus.io/path"] {
			bad("%s: metrics_path %q, but the pods' prometheus.io/path says %q", scrapeConfigFile, sc.MetricsPath, ann["prometheus.io/path"])
		}
		if len(sc.DNSSDConfigs) == 0 {
			bad("%s: job %s finds no pods (no dns_sd_configs)", scrapeConfigFile, sc.JobName)
		}
		for _, sd := range sc.DNSSDConfigs {
			if sd.Type != "A" || int32(sd.Port) != mport {
				bad("%s: dns_sd_configs type %q port %d, want A records and the pods' metrics port %d", scrapeConfigFile, sd.Type, sd.Port, mport)
			}
			for _, n := range sd.Names {
				svc := strings.Split(n, ".")[0]
				i := slices.IndexFunc(m.services, func(s *corev1.Service) bool { return s.Name == svc })
				if i < 0 || m.services[i].Spec.ClusterIP != corev1.ClusterIPNone || !m.services[i].Spec.PublishNotReadyAddresses {
					bad("%s: %s is not the DNS name of a headless Service of the directory that publishes every pod, ready or not (clusterIP: None, publishNotReadyAddresses: true)", scrapeConfigFile, n)
				}
			}
		}
	}
	errs = append(errs, m.checkScrapeNamespace()...)
	return errs
}

// checkScrapeNamespace relabels, with Prometheus's own relabelling, the
// target DNS discovery makes of each name of the scrape configuration,
// and of the same name in another namespace: each must be kept, with the
// namespace label of the name's namespace (the Service's, so the pods'),
// never a constant an operator must keep in step with the name.
func (m *manifests) checkScrapeNamespace() []error {
	var errs []error
	for i, sc := range m.scrape.ScrapeConfigs {
		var cfgs []*relabel.Config
		if i < len(m.relabel) {
			cfgs = m.relabel[i]
		}
		for _, sd := range sc.DNSSDConfigs {
			for _, n := range sd.Names {
				parts := strings.Split(n, ".")
				if len(parts) < 3 || parts[2] != "svc" {
					errs = append(errs, fmt.Errorf("%s: %s is not a Service's name SERVICE.NAMESPACE.svc…, which names the pods' namespace", scrapeConfigFile, n))
					continue
				}
				other := slices.Clone(parts)
				other[1] = "elsewhere"
				for _, name := range []string{n, strings.Join(other, ".")} {
					want := strings.Split(name, ".")[1]
					lb := promlabels.NewBuilder(promlabels.FromStrings("__address__", "10.0.0.1:"+strconv.Itoa(sd.Port),
						"__meta_dns_name", name, "__metrics_path__", sc.MetricsPath, "__scheme__", "http", "job", sc.JobName))
					if keep := relabel.ProcessBuilder(lb, cfgs...); !keep || lb.Get("namespace") != want {
						errs = append(errs, fmt.Errorf("%s: a target found by %s is relabelled with namespace %q (kept: %v), want %q: the namespace of the name, which is the pods'",
							scrapeConfigFile, name, lb.Get("namespace"), keep, want))
					}
				}
			}
		}
	}
	return errs
}

// checkKustomization reports where a kustomization (named what) does not
// list exactly the object files of its directory.
func checkKustomization(what string, k kustomization, objectFiles []string) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		bad("%s: apiVersion %q kind %q, want kustomize.config.k8s.io/v1beta1 Kustomization", what, k.APIVersion, k.Kind)
	}
	resources := slices.Sorted(slices.Values(k.Resources))
	for _, r := range resources {
		if !slices.Contains(objectFiles, r) {
			bad("%s lists %s, which is not a Kubernetes object of the directory to apply (a Secret example is copied, never applied)", what, r)
		}
	}
	for _, o := range objectFiles {
		if !slices.Contains(resources, o) {
			bad("%s does not list %s", what, o)
		}
	}
	if len(resources) != len(slices.Compact(slices.Clone(resources))) {
		bad("%s lists a file twice", what)
	}
	return errs
}

func deref(p *int64) any {
	if p == nil {
		return "unset"
	}
	return *p
}

// serverEnv is the container's environment for a run of the server on
// this machine: each file a setting names is written under dir from the
// Secret example it is mounted from, REDIS_URL's host becomes redisHost,
// and the metrics' own address, if set, metricsAddr. It also returns the example's API keys, and the other
// secrets it wrote (the Redis password).
func serverEnv(m *manifests, dir, redisHost, metricsAddr string) (env []string, keys []string, secrets []string, err error) {
	c, err := m.container()
	if err != nil {
		return nil, nil, nil, err
	}
	return podEnv(m, m.deployment.Spec.Template.Spec.Volumes, c, dir, redisHost, metricsAddr)
}

// podEnv is serverEnv for container c of a pod with volumes.
func podEnv(m *manifests, volumes []corev1.Volume, c *corev1.Container, dir, redisHost, metricsAddr string) (env []string, keys []string, secrets []string, err error) {
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.Name == metricsAddrSetting && v != "":
			v = metricsAddr
		case e.Name == "REDIS_URL":
			u, err := url.Parse(v)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("REDIS_URL: %w", err)
			}
			u.Host = redisHost
			v = u.String()
		case strings.HasSuffix(e.Name, "_FILE"):
			volume, s, key, err := m.secretFileIn(volumes, c, v)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%s: %w", e.Name, err)
			}
			data := secretData(s, key)
			v = filepath.Join(dir, volume, key)
			if err := os.MkdirAll(filepath.Dir(v), 0o700); err != nil {
				return nil, nil, nil, err
			}
			if err := os.WriteFile(v, data, 0o600); err != nil {
				return nil, nil, nil, err
			}
			if e.Name != "INVENTORY_API_KEYS_FILE" {
				secrets = append(secrets, strings.TrimSpace(string(data)))
				break
			}
			for _, l := range strings.Split(string(data), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					keys = append(keys, l)
				}
			}
		}
		env = append(env, e.Name+"="+v)
	}
	return env, keys, secrets, nil
}
