// Package senderauth carries who sent telemetry to a gateway, from the
// authenticator that verified it (extension/k8stokenreviewauthextension) to
// the check that decides what that sender may speak for
// (processor/acceleratorsenderprocessor), and that check's verdict on to
// the component that acts on the data (exporter/acceleratorremediationexporter).
//
// The identity travels the collector's way, as client.Info.Auth in the
// request's context, under attribute names other components can read too
// (contrib's attributes processor: from_context: auth.k8s.node.name).
package senderauth // import "github.com/otelcol-accel/otelcol-accel/internal/senderauth"

import (
	"context"

	"go.opentelemetry.io/collector/client"
)

// Attribute names of an Identity in client.Info.Auth.
const (
	AttrUsername = "username"
	AttrUID      = "uid"
	AttrGroups   = "groups"
	AttrPodName  = "k8s.pod.name"
	AttrPodUID   = "k8s.pod.uid"
	AttrNodeName = "k8s.node.name"
)

// Identity is a verified sender: a Kubernetes user (for a service account
// token, system:serviceaccount:<namespace>:<name>) and, for a token bound to
// a pod, the pod and the node it runs on, as the API server vouches for them.
type Identity struct {
	Username string
	UID      string
	Groups   []string
	PodName  string
	PodUID   string
	NodeName string
}

// String names the sender for logs and audit records:
// <user>/<pod>@<node>, leaving out what the token does not bind.
func (id Identity) String() string {
	s := id.Username
	if id.PodName != "" {
		s += "/" + id.PodName
	}
	if id.NodeName != "" {
		s += "@" + id.NodeName
	}
	return s
}

// AuthData is an Identity as client.AuthData.
type AuthData struct{ Identity Identity }

var _ client.AuthData = AuthData{}

// GetAttribute returns the named part of the identity (nil when unknown).
func (a AuthData) GetAttribute(name string) any {
	id := a.Identity
	switch name {
	case AttrUsername:
		return id.Username
	case AttrUID:
		return id.UID
	case AttrGroups:
		return id.Groups
	case AttrPodName:
		return id.PodName
	case AttrPodUID:
		return id.PodUID
	case AttrNodeName:
		return id.NodeName
	}
	return nil
}

// GetAttributeNames lists the attributes GetAttribute answers.
func (AuthData) GetAttributeNames() []string {
	return []string{AttrUsername, AttrUID, AttrGroups, AttrPodName, AttrPodUID, AttrNodeName}
}

// NewContext returns ctx with id as its client.Info.Auth (the rest of the
// client.Info, the peer address and metadata, kept).
func NewContext(ctx context.Context, id Identity) context.Context {
	info := client.FromContext(ctx)
	info.Auth = AuthData{Identity: id}
	return client.NewContext(ctx, info)
}

// FromContext returns the sender's identity, when an authenticator set
// one. An authenticator other than ours is read through the same attribute
// names; a username is the least it must give.
func FromContext(ctx context.Context) (Identity, bool) {
	auth := client.FromContext(ctx).Auth
	if auth == nil {
		return Identity{}, false
	}
	if a, ok := auth.(AuthData); ok {
		return a.Identity, a.Identity.Username != ""
	}
	str := func(name string) string {
		s, _ := auth.GetAttribute(name).(string)
		return s
	}
	id := Identity{
		Username: str(AttrUsername), UID: str(AttrUID),
		PodName: str(AttrPodName), PodUID: str(AttrPodUID), NodeName: str(AttrNodeName),
	}
	id.Groups, _ = auth.GetAttribute(AttrGroups).([]string)
	return id, id.Username != ""
}
