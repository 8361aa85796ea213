// authmock driver for golang.org/x/oauth2.
//
// Recipe, as the package documents it: an oauth2.Config with the token
// endpoint, PasswordCredentialsToken to sign in, and Config.Client, whose
// transport attaches the token and refreshes it through a ReuseTokenSource
// when the token is expired by its own clock (with a 10 s early margin).
// The package never refreshes on a 401. A refused refresh surfaces as an
// error from the request, which the app turns into "sign in again".
// The `cancel` extension cancels the call's context, as an app does.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/oauth2"
)

type message struct {
	ID, Op, BaseURL, ClientID, ClientSecret, Username, Password, Method, Path, URL, Call string
	Headers                                                                   map[string]string
	Body                                                                      *string
}

var (
	out    sync.Mutex
	config *oauth2.Config
	client *http.Client
	mu     sync.RWMutex
	base   string
	// The app's calls in flight, by the runner's message id: their contexts' cancel functions.
	calls sync.Map
)

func answer(fields map[string]interface{}) {
	line, _ := json.Marshal(fields)
	out.Lock()
	defer out.Unlock()
	// The runner gone (its end of the pipe closed): leave quietly, as at the end of stdin.
	if _, err := os.Stdout.Write(append(line, '\n')); err != nil {
		os.Exit(0)
	}
}

func login(m message) map[string]interface{} {
	token, err := config.PasswordCredentialsToken(context.Background(), m.Username, m.Password)
	if err != nil {
		return map[string]interface{}{"ok": false, "outcome": "http_error", "message": err.Error()}
	}
	mu.Lock()
	client = config.Client(context.Background(), token)
	mu.Unlock()
	return map[string]interface{}{"ok": true, "outcome": "ok"}
}

// ctx: the call's context, which a `cancel` for it cancels.
func request(m message, ctx context.Context) map[string]interface{} {
	// `url` (the url capability): a request to another host; otherwise a path on the server.
	url := m.URL
	if url == "" {
		url = base + m.Path
	}
	var body io.Reader
	if m.Body != nil {
		body = strings.NewReader(*m.Body)
	}
	req, err := http.NewRequestWithContext(ctx, m.Method, url, body)
	if err != nil {
		return map[string]interface{}{"ok": false, "outcome": "unsupported", "message": err.Error()}
	}
	for name, value := range m.Headers {
		req.Header.Set(name, value)
	}
	mu.RLock()
	c := client
	mu.RUnlock()
	resp, err := c.Do(req)
	if err != nil {
		var refused *oauth2.RetrieveError
		if errors.As(err, &refused) {
			// The renewal before the call failed. A 4xx other than 429 refused
			// the refresh token: sign in again. A 5xx or 429 refused nothing:
			// the call was never sent (the protocol's refresh_failed).
			status := refused.Response.StatusCode
			if status >= 400 && status < 500 && status != 429 {
				return map[string]interface{}{"ok": false, "outcome": "reauth_required", "status": status, "message": err.Error()}
			}
			return map[string]interface{}{"ok": false, "outcome": "refresh_failed", "status": status, "message": err.Error()}
		}
		if errors.Is(ctx.Err(), context.Canceled) {
			return map[string]interface{}{"ok": false, "outcome": "cancelled", "message": err.Error()}
		}
		return map[string]interface{}{"ok": false, "outcome": "transport_error", "message": err.Error()}
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	outcome := "http_error"
	if ok {
		outcome = "ok"
	}
	return map[string]interface{}{"ok": ok, "outcome": outcome, "status": resp.StatusCode, "body": string(text)}
}

func main() {
	// Notified, SIGPIPE no longer kills the process: a write to the runner's
	// closed pipe returns EPIPE, which answer() ends on.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	var work sync.WaitGroup
	for scanner.Scan() {
		var m message
		if err := json.Unmarshal(scanner.Bytes(), &m); err != nil {
			continue
		}
		switch m.Op {
		case "hello":
			base = m.BaseURL
			config = &oauth2.Config{ClientID: m.ClientID, ClientSecret: m.ClientSecret,
				Endpoint: oauth2.Endpoint{TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}
			answer(map[string]interface{}{"id": m.ID, "ok": true, "driver": "golang.org/x/oauth2", "version": "0.3.0 (Debian)", "profiles": []string{"oauth2"}, "capabilities": []string{"url", "cancel"}})
		case "cancel":
			// Answered at once: the cancelled call answers for itself.
			result := map[string]interface{}{"id": m.ID, "ok": true, "outcome": "ok"}
			if cancel, running := calls.Load(m.Call); running {
				cancel.(context.CancelFunc)()
			} else {
				result["message"] = "no call " + m.Call + " is in flight"
			}
			answer(result)
		case "shutdown":
			work.Wait()
			answer(map[string]interface{}{"id": m.ID, "ok": true})
			return
		case "login", "request":
			work.Add(1)
			// The call's context exists before its goroutine runs, so a cancel right behind it finds it.
			ctx, cancel := context.WithCancel(context.Background())
			calls.Store(m.ID, cancel)
			go func(m message) {
				defer work.Done()
				defer func() {
					calls.Delete(m.ID)
					cancel()
				}()
				var result map[string]interface{}
				if m.Op == "login" {
					result = login(m)
				} else {
					result = request(m, ctx)
				}
				result["id"] = m.ID
				answer(result)
			}(m)
		}
	}
}
