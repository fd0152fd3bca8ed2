package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// modelServer is a scripted model endpoint on 127.0.0.1 speaking the three
// agents' model APIs (Anthropic Messages, OpenAI Responses, Gemini
// streamGenerateContent, all streamed as SSE): the first request that
// offers the agent's shell tool gets one call of it with the command under
// test; any request that carries a tool result (the hook's denial or the
// command's output) gets a final text. Every request body is logged.
type modelServer struct {
	URL     string
	command string

	mu     sync.Mutex
	bodies []string
}

func startModelServer(t *testing.T, command string) *modelServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &modelServer{URL: "http://" + ln.Addr().String(), command: command}
	srv := &http.Server{Handler: m}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return m
}

// Bodies returns the request bodies received so far.
func (m *modelServer) Bodies() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.bodies...)
}

// ToolResults are the bodies that carried a tool result back to the model.
func (m *modelServer) ToolResults() []string {
	var out []string
	for _, b := range m.Bodies() {
		if hasToolResult(b) {
			out = append(out, b)
		}
	}
	return out
}

// toolResultText is the text of the tool results a request body carries
// back to the model: Anthropic tool_result content, OpenAI
// function_call_output output, Gemini functionResponse (as JSON).
func toolResultText(body string) string {
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		return ""
	}
	var b strings.Builder
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			switch {
			case x["type"] == "tool_result":
				c, _ := json.Marshal(x["content"])
				b.Write(c)
				b.WriteByte('\n')
				return
			case x["type"] == "function_call_output":
				c, _ := json.Marshal(x["output"])
				b.Write(c)
				b.WriteByte('\n')
				return
			case x["functionResponse"] != nil:
				c, _ := json.Marshal(x["functionResponse"])
				b.Write(c)
				b.WriteByte('\n')
				return
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	return b.String()
}

func hasToolResult(body string) bool {
	return strings.Contains(body, `"tool_result"`) || strings.Contains(body, `"function_call_output"`) || strings.Contains(body, `"functionResponse"`)
}

func (m *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	body := string(b)
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusOK) // HEAD /api/hello and friends
		return
	}
	m.mu.Lock()
	m.bodies = append(m.bodies, body)
	m.mu.Unlock()
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/v1/messages/count_tokens"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"input_tokens":10}`)
	case strings.HasPrefix(p, "/v1/messages"):
		m.anthropic(w, body)
	case strings.HasSuffix(p, "/responses"):
		m.openai(w, body)
	case strings.Contains(p, ":streamGenerateContent"):
		m.gemini(w, body)
	case strings.Contains(p, ":generateContent"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"{}"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}`)
	case strings.Contains(p, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"totalTokens":10}`)
	default:
		http.NotFound(w, r)
	}
}

// wantsCall: the request offers the shell tool and carries no tool result.
func wantsCall(body, tool string) bool {
	return strings.Contains(body, `"`+tool+`"`) && !hasToolResult(body)
}

func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		_, _ = io.WriteString(w, e)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (m *modelServer) anthropic(w http.ResponseWriter, body string) {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	start := ev("message_start", `{"type":"message_start","message":{"id":"msg_test","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
	if wantsCall(body, "Bash") {
		input := fmt.Sprintf(`{"command":%s,"description":"the command under test"}`, jsonString(m.command))
		sse(w, start,
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_test1","name":"Bash","input":{}}}`),
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+jsonString(input)+`}}`),
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}`),
			ev("message_stop", `{"type":"message_stop"}`))
		return
	}
	sse(w, start,
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"done"}}`),
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`),
		ev("message_stop", `{"type":"message_stop"}`))
}

func (m *modelServer) openai(w http.ResponseWriter, body string) {
	ev := func(data string) string {
		var v struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(data), &v)
		return "event: " + v.Type + "\ndata: " + data + "\n\n"
	}
	usage := `"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15}`
	created := ev(`{"type":"response.created","response":{"id":"resp_test"}}`)
	done := ev(`{"type":"response.completed","response":{"id":"resp_test",` + usage + `}}`)
	if wantsCall(body, "exec_command") {
		args := fmt.Sprintf(`{"cmd":%s}`, jsonString(m.command))
		sse(w, created,
			ev(`{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_test1","call_id":"call_test1","name":"exec_command","arguments":`+jsonString(args)+`}}`),
			done)
		return
	}
	sse(w, created,
		ev(`{"type":"response.output_item.done","item":{"type":"message","role":"assistant","id":"msg_test","content":[{"type":"output_text","text":"done"}]}}`),
		done)
}

func (m *modelServer) gemini(w http.ResponseWriter, body string) {
	usage := `"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}`
	if wantsCall(body, "run_shell_command") {
		part := fmt.Sprintf(`{"functionCall":{"name":"run_shell_command","args":{"command":%s,"description":"the command under test"}}}`, jsonString(m.command))
		sse(w, `data: {"candidates":[{"content":{"role":"model","parts":[`+part+`]},"finishReason":"STOP","index":0}],`+usage+"}\n\n")
		return
	}
	sse(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"done"}]},"finishReason":"STOP","index":0}],`+usage+"}\n\n")
}
