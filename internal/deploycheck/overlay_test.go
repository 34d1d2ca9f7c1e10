package deploycheck

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// overlayDir is the example overlay an operator copies: a namespace, the
// image pinned by digest, tracing on.
var overlayDir = filepath.Join("..", "..", "deploy", "overlays", "example")

// overlayKustomization is the part of a Kustomization the example uses,
// decoded strictly as kustomization is.
type overlayKustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
		Digest  string `json:"digest"`
	} `json:"images"`
	Patches []struct {
		Path string `json:"path"`
	} `json:"patches"`
}

var digestRef = regexp.MustCompile(`^[^@:]+(:[0-9]+)?(/[^@:]+)*@sha256:[0-9a-f]{64}$`)

// renderOverlay builds dir with kustomize (the library kubectl apply -k
// runs) and decodes every object it yields strictly.
func renderOverlay(dir string) (*manifests, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	m := &manifests{secrets: map[string]*corev1.Secret{}}
	var errs []error
	for _, r := range res.Resources() {
		data, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		obj, err := decodeObject(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err))
			continue
		}
		if err := m.add(obj); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err))
		}
	}
	if m.deployment == nil {
		errs = append(errs, fmt.Errorf("%s yields no Deployment", dir))
	}
	return m, errors.Join(errs...)
}

// checkOverlay checks a rendered overlay: every object in namespace,
// every container's image pinned by digest, and, with tracing on, an
// egress rule to the OTLP endpoint's port for the pods.
func checkOverlay(m *manifests, namespace string) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if namespace == "" {
		bad("the overlay sets no namespace")
	}
	for what, meta := range m.objectMeta() {
		if meta.Namespace != namespace {
			bad("%s is in namespace %q, want the overlay's %q", what, meta.Namespace, namespace)
		}
	}
	pods := map[string]corev1.PodSpec{"Deployment " + m.deployment.Name: m.deployment.Spec.Template.Spec}
	for _, j := range m.jobs {
		pods["Job "+j.Name] = j.Spec.Template.Spec
	}
	for what, pod := range pods {
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			if !digestRef.MatchString(c.Image) {
				bad("%s: container %s's image %s is not pinned by digest (NAME@sha256:…)", what, c.Name, c.Image)
			}
		}
	}
	c, err := m.container()
	if err != nil {
		return append(errs, err)
	}
	endpoint, _ := containerEnv(c, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint, _ = containerEnv(c, "OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint == "" {
		return errs
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return append(errs, fmt.Errorf("the OTLP endpoint %q is not a URL", endpoint))
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	podLabels := labels.Set(m.deployment.Spec.Template.Labels)
	open := false
	for _, np := range m.policies {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !sel.Matches(podLabels) {
			continue
		}
		for _, r := range np.Spec.Egress {
			if len(r.To) > 0 && slices.ContainsFunc(r.Ports, func(p networkingv1.NetworkPolicyPort) bool { return p.Port != nil && p.Port.String() == port }) {
				open = true
			}
		}
	}
	if !open {
		bad("tracing is on (OTLP endpoint %s) but no NetworkPolicy lets the pods out to port %s with a to:", endpoint, port)
	}
	return errs
}

// TestOverlay builds the example overlay as kubectl apply -k would,
// decodes what it yields strictly, and checks it: its own files, the
// namespace, the digests, the OTLP egress, and the review's checks of the
// base still hold after its changes.
func TestOverlay(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(overlayDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k overlayKustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatalf("%s: %v", filepath.Join(overlayDir, "kustomization.yaml"), err)
	}
	for _, p := range k.Patches {
		patch, err := os.ReadFile(filepath.Join(overlayDir, p.Path))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeObject(patch); err != nil {
			t.Errorf("patch %s: %v", p.Path, err)
		}
	}
	f := repoFacts(t)
	if !slices.ContainsFunc(k.Images, func(i struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
		Digest  string `json:"digest"`
	}) bool {
		return i.Name == f.image && strings.HasPrefix(i.Digest, "sha256:") && i.NewTag == ""
	}) {
		t.Errorf("the overlay's images do not pin %s by digest", f.image)
	}
	m, err := renderOverlay(overlayDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range checkOverlay(m, k.Namespace) {
		t.Error(err)
	}
	m.secrets = readDeploy(t).secrets // created by the operator, in the examples' shape
	for _, err := range append(checkPlatform(m, f), checkSeedJob(m, f)...) {
		t.Error(err)
	}
}

// TestOverlayCatches: checkOverlay refuses a tag, an object outside the
// namespace, and tracing with no way out to the collector.
func TestOverlayCatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(m *manifests)
		wants string
	}{
		{"tag", func(m *manifests) { ctr(m).Image = "registry.example/petinventory/inventory-server:v0.1.0" }, "not pinned by digest"},
		{"Job container tag", func(m *manifests) {
			m.jobs[0].Spec.Template.Spec.Containers[0].Image = "petinventory/inventory-server:v0.1.0"
		}, "Job inventory-seed: container inventory-server's image"},
		{"namespace", func(m *manifests) { m.services[0].Namespace = "default" }, `in namespace "default"`},
		{"OTLP closed", func(m *manifests) {
			m.policies = slices.DeleteFunc(m.policies, func(np *networkingv1.NetworkPolicy) bool { return np.Name == "inventory-server-otlp" })
		}, "no NetworkPolicy lets the pods out to port 4318"},
		{"OTLP elsewhere", func(m *manifests) { setEnv(m, "OTEL_EXPORTER_OTLP_ENDPOINT", "https://otlp.example") }, "out to port 443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := renderOverlay(overlayDir)
			if err != nil {
				t.Fatal(err)
			}
			if errs := checkOverlay(m, "inventory"); len(errs) > 0 {
				t.Fatalf("the overlay does not pass as it is: %v", errors.Join(errs...))
			}
			tc.edit(m)
			errs := checkOverlay(m, "inventory")
			if len(errs) == 0 || !strings.Contains(errors.Join(errs...).Error(), tc.wants) {
				t.Errorf("checkOverlay reported %v, want an error containing %q", errs, tc.wants)
			}
		})
	}
}
