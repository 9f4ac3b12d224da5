package kubeapi

import (
	"fmt"
	"os"
)

// WriteKubeconfig writes a kubeconfig that points at the server with no
// authentication, for client-go (clientcmd) and kubectl.
func WriteKubeconfig(path, serverURL, cluster string) error {
	name := "accelsim-" + cluster
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
contexts:
- name: %[1]s
  context:
    cluster: %[1]s
    user: accelsim
users:
- name: accelsim
  user: {}
current-context: %[1]s
`, name, serverURL)
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}
