package cwotlptest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Credentials are the static keys the client under test signs with (the
// standard AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).
type Credentials struct {
	AccessKeyID, SecretAccessKey string
}

// maxClockSkew is how far a request's X-Amz-Date may be from the server's
// clock; AWS refuses requests more than 15 minutes off.
const maxClockSkew = 15 * time.Minute

var authorizationRE = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$`)

// VerifySigV4 checks a request's Signature Version 4 the way AWS does: the
// credential scope names the expected key, date, region and service, the
// request is recent, and the signature matches the one the real signer
// from aws-sdk-go-v2 computes over the request's canonical form (method,
// path, query, the headers it says it signed, and the SHA-256 of body as
// received) with the secret key. body is the request body as it came over
// the wire (compressed, when it is).
func VerifySigV4(r *http.Request, body []byte, creds Credentials, region, service string, now time.Time) error {
	auth := r.Header.Get("Authorization")
	m := authorizationRE.FindStringSubmatch(auth)
	if m == nil {
		return fmt.Errorf("authorization header %q is not a SigV4 signature", auth)
	}
	keyID, date, gotRegion, gotService, signedHeaders := m[1], m[2], m[3], m[4], m[5]
	if keyID != creds.AccessKeyID {
		return fmt.Errorf("signed with access key %q, want %q", keyID, creds.AccessKeyID)
	}
	if gotRegion != region || gotService != service {
		return fmt.Errorf("signed for region %q service %q, want region %q service %q", gotRegion, gotService, region, service)
	}
	amzDate := r.Header.Get("X-Amz-Date")
	signedAt, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil {
		return fmt.Errorf("X-Amz-Date %q: %w", amzDate, err)
	}
	if !strings.HasPrefix(amzDate, date) {
		return fmt.Errorf("credential scope date %s is not the date of X-Amz-Date %s", date, amzDate)
	}
	if skew := now.Sub(signedAt); skew > maxClockSkew || skew < -maxClockSkew {
		return fmt.Errorf("signed at %s, %s from the server's clock", amzDate, skew.Round(time.Second))
	}
	payloadHash := sha256.Sum256(body)
	hash := hex.EncodeToString(payloadHash[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != hash {
		return fmt.Errorf("X-Amz-Content-Sha256 %s is not the SHA-256 of the body (%s)", h, hash)
	}

	// The request as the client signed it: only the headers it lists.
	resigned := &http.Request{
		Method: r.Method,
		URL:    &url.URL{Scheme: "https", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery},
		Host:   r.Host,
		Header: http.Header{},
	}
	for _, name := range strings.Split(signedHeaders, ";") {
		switch name {
		case "host":
		case "content-length":
			resigned.ContentLength = r.ContentLength
		default:
			values := r.Header.Values(name)
			if len(values) == 0 {
				return fmt.Errorf("signed header %q is not in the request", name)
			}
			resigned.Header[http.CanonicalHeaderKey(name)] = values
		}
	}
	key := aws.Credentials{
		AccessKeyID:     creds.AccessKeyID,
		SecretAccessKey: creds.SecretAccessKey,
		SessionToken:    r.Header.Get("X-Amz-Security-Token"),
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), key, resigned, hash, service, region, signedAt); err != nil {
		return fmt.Errorf("re-signing the request: %w", err)
	}
	if want := resigned.Header.Get("Authorization"); want != auth {
		return fmt.Errorf("signature does not match the request (body of %d bytes, SHA-256 %s): got %q, the request signs as %q", len(body), hash, auth, want)
	}
	return nil
}
