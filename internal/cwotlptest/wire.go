package cwotlptest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/http"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// The endpoints' payload formats.
const (
	contentProtobuf = "application/x-protobuf"
	contentJSON     = "application/json"
)

// maxLogsRequestBytes is the logs endpoint's limit on a request's
// uncompressed size (5 MB, CloudWatch's OTLP endpoint documentation).
const maxLogsRequestBytes = 5 * 1000 * 1000

// decodeBody undoes the request's Content-Encoding: CloudWatch's OTLP
// endpoints take gzip or none. On an error it also returns the status
// CloudWatch answers.
func decodeBody(r *http.Request, body []byte) ([]byte, int, error) {
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
		return body, 0, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("gzip body: %w", err)
		}
		raw, err := io.ReadAll(io.LimitReader(zr, maxBody))
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("gzip body: %w", err)
		}
		return raw, 0, nil
	default:
		return nil, http.StatusUnsupportedMediaType, fmt.Errorf("Content-Encoding %q: the endpoint takes gzip or none", enc)
	}
}

// contentType is the request's media type, protobuf or JSON.
func contentType(r *http.Request) (string, error) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != contentProtobuf && mt != contentJSON) {
		return "", fmt.Errorf("Content-Type %q: the endpoint takes %s or %s", ct, contentProtobuf, contentJSON)
	}
	return mt, nil
}

func unmarshalMetrics(r *http.Request, raw []byte) (pmetric.Metrics, error) {
	mt, err := contentType(r)
	if err != nil {
		return pmetric.Metrics{}, err
	}
	req := pmetricotlp.NewExportRequest()
	if mt == contentProtobuf {
		err = req.UnmarshalProto(raw)
	} else {
		err = req.UnmarshalJSON(raw)
	}
	if err != nil {
		return pmetric.Metrics{}, fmt.Errorf("not an OTLP metrics export request (%s): %w", mt, err)
	}
	return req.Metrics(), nil
}

func unmarshalLogs(r *http.Request, raw []byte) (plog.Logs, error) {
	mt, err := contentType(r)
	if err != nil {
		return plog.Logs{}, err
	}
	req := plogotlp.NewExportRequest()
	if mt == contentProtobuf {
		err = req.UnmarshalProto(raw)
	} else {
		err = req.UnmarshalJSON(raw)
	}
	if err != nil {
		return plog.Logs{}, fmt.Errorf("not an OTLP logs export request (%s): %w", mt, err)
	}
	return req.Logs(), nil
}

// respondMetrics answers an accepted request with an empty export
// response in the request's format, as CloudWatch does.
func respondMetrics(w http.ResponseWriter, r *http.Request) {
	resp := pmetricotlp.NewExportResponse()
	respond(w, r, resp.MarshalProto, resp.MarshalJSON)
}

func respondLogs(w http.ResponseWriter, r *http.Request) {
	resp := plogotlp.NewExportResponse()
	respond(w, r, resp.MarshalProto, resp.MarshalJSON)
}

func respond(w http.ResponseWriter, r *http.Request, asProto, asJSON func() ([]byte, error)) {
	mt, _ := contentType(r)
	encode := asProto
	if mt == contentJSON {
		encode = asJSON
	}
	b, err := encode()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", mt)
	_, _ = w.Write(b)
}
