package manifests

import (
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizations are the roots users apply with `kubectl apply -k`.
var kustomizations = []string{
	"base",
	"overlays/prometheus",
	"overlays/eks-cloudwatch-emf",
	"overlays/eks-cloudwatch-otlp",
	"overlays/reliability",
	"overlays/remediation",
}

// strictDecoder rejects unknown and duplicated fields, so a typo in a
// manifest fails here rather than being dropped silently by the API server.
var strictDecoder = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// render builds a kustomization with the real kustomize library and decodes
// every object into its client-go type.
func render(root string) ([]runtime.Object, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resources, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(kubernetesDir(), root))
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", root, err)
	}
	var objs []runtime.Object
	for _, r := range resources.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		obj, _, err := strictDecoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", root, r.GetKind(), r.GetName(), err)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// decodeFile decodes every document of a plain manifest file strictly.
func decodeFile(docs [][]byte) ([]runtime.Object, error) {
	var objs []runtime.Object
	for i, doc := range docs {
		obj, _, err := strictDecoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}
