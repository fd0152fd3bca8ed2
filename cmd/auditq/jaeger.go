package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Jaeger link kinds (--jaeger-link).
const (
	// jaegerLinkAuto asks the Jaeger at --jaeger-url once which page it
	// serves: the UI's trace page when it serves the Jaeger UI, else the
	// query API's JSON.
	jaegerLinkAuto = "auto"
	// jaegerLinkUI is the UI's trace page, {url}/trace/{id}: the official
	// Jaeger images and binaries with the UI built in.
	jaegerLinkUI = "ui"
	// jaegerLinkAPI is the HTTP query API, {url}/api/traces/{id} (JSON):
	// every Jaeger, including one built from its Go module (bin/jaeger of
	// the local stack), which has no UI.
	jaegerLinkAPI = "api"
)

// jaegerUIMarker is in the Jaeger UI's index.html (its React root); a
// Jaeger built without the UI serves a placeholder page without it.
const jaegerUIMarker = "jaeger-ui-root"

// jaegerProbeTimeout bounds each request of the auto probe.
const jaegerProbeTimeout = 3 * time.Second

// jaegerLink returns the link to trace id in the Jaeger whose query base
// URL is base, of kind (auto, ui or api). For auto it asks the server: a
// page with the UI's root element means the UI link, anything else the
// API link; an unreachable server gives the UI link. note is for the user
// (stderr), "" when there is nothing to say: the server did not answer, or
// it does not hold the trace (not exported yet, sampled out, or past its
// retention).
func jaegerLink(ctx context.Context, client *http.Client, base, id, kind string) (link, note string) {
	base = strings.TrimRight(base, "/")
	ui, api := base+"/trace/"+id, base+"/api/traces/"+id
	switch kind {
	case jaegerLinkUI:
		return ui, ""
	case jaegerLinkAPI:
		return api, ""
	}
	status, body, err := get(ctx, client, base+"/")
	if err != nil {
		return ui, fmt.Sprintf("Jaeger at %s did not answer (%v); the link assumes its UI (--jaeger-link api for the query API)", base, err)
	}
	link = api
	if status == http.StatusOK && strings.Contains(body, jaegerUIMarker) {
		link = ui
	}
	status, _, err = get(ctx, client, api)
	switch {
	case err != nil:
		note = fmt.Sprintf("Jaeger at %s: %v", base, err)
	case status == http.StatusNotFound:
		note = fmt.Sprintf("Jaeger at %s does not hold trace %s (not exported yet, sampled out, or past its retention)", base, id)
	case status != http.StatusOK:
		note = fmt.Sprintf("Jaeger at %s answered %d for trace %s", base, status, id)
	}
	return link, note
}

// get fetches target, reading at most 64 KiB of the body.
func get(ctx context.Context, client *http.Client, target string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, jaegerProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the caller's message
		}
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(b), err
}
