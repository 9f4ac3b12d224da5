package browser

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// API reads the console's JSON API (docs/insights.md), to wait until the
// gateway has seen the fleet and to pick what the browser checks; what the
// page shows is then compared with the gateway's Prometheus output, not
// with this.
type API struct {
	// Base is the console's URL, ending in "/".
	Base string
}

// Get fetches api/v1/<path> with query parameters into out.
func (a API) Get(path string, q url.Values, out any) error {
	u := a.Base + "api/v1/" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %.300s", u, resp.Status, body)
	}
	return json.Unmarshal(body, out)
}

// The parts of the API's answers the tests read.
type (
	Fleet struct {
		Devices struct {
			Total int `json:"total"`
		} `json:"devices"`
		Health struct {
			Failed int `json:"failed"`
		} `json:"health"`
		Findings struct {
			Open int `json:"open"`
		} `json:"findings"`
	}
	Holder struct {
		Namespace string `json:"namespace"`
		Pod       string `json:"pod"`
		Team      string `json:"team"`
	}
	Tile struct {
		ID            string   `json:"id"`
		Node          string   `json:"node"`
		Kind          string   `json:"kind"`
		Family        string   `json:"family"`
		PartitionType string   `json:"partition_type"`
		Health        string   `json:"health"`
		Holders       []Holder `json:"holders"`
		Partitions    []Tile   `json:"partitions"`
	}
	Grid struct {
		TotalNodes int `json:"total_nodes"`
		Nodes      []struct {
			Node  string `json:"node"`
			Tiles []Tile `json:"tiles"`
		} `json:"nodes"`
	}
	Finding struct {
		ID            string  `json:"id"`
		Kind          string  `json:"kind"`
		State         string  `json:"state"`
		MonthlySaving float64 `json:"monthly_saving"`
		Evidence      string  `json:"evidence"`
		DeviceID      string  `json:"device_id"`
		PartitionID   *string `json:"partition_id"`
		Node          string  `json:"node"`
	}
	Findings struct {
		Total    int       `json:"total"`
		Findings []Finding `json:"findings"`
	}
	Team struct {
		Team        string  `json:"team"`
		CostPerHour float64 `json:"cost_per_hour"`
	}
	Teams struct {
		Teams []Team `json:"teams"`
	}
	Session struct {
		Backend string `json:"backend"`
	}
)
