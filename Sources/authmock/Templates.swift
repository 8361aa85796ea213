import Foundation

/// What `authmock init` writes. The Python driver is the one
/// docs/writing-a-driver.md shows (a test keeps the two identical).
enum Templates {
    /// What the Python driver gets wrong: only `should` findings. CI runs it
    /// against the whole built-in suite with this file (InitTests).
    static let pythonDriverExpectedFailures = """
        # What driver.py is known to get wrong, case by case. `authmock run
        # --expected-failures THIS_FILE` reports these as SKIP (known failure), so
        # CI stays green while the reasons stay visible; a listed case that starts
        # passing says so. Each of these is a `should` finding (NON-STRICT), not a
        # broken session. Replace the client with yours and list what it gets.
        "5.2": "refreshes once on any 401 from its server, one with only a Basic challenge too (Client.request: if status == 401)"
        "5.4": "does not retry a 503 itself: the 503 and its Retry-After reach the application"
        "5.5": "refreshes on the second, Basic-only 401 too (Client.request: if status == 401)"
        "6.1": "refreshes only after a 401, never ahead of expires_in by its own clock"

        """

    static let pythonDriver = #"""
        #!/usr/bin/env python3
        import base64, json, sys, threading, urllib.error, urllib.parse, urllib.request

        out = threading.Lock()
        def answer(message):
            with out: print(json.dumps(message), flush=True)

        class Client:  # a token cache, refresh on 401 (one at a time), sign-out only when the refresh is refused
            def __init__(self, hello):
                self.base, self.lock, self.generation, self.dead = hello["baseURL"], threading.Lock(), 0, False
                self.basic = "Basic " + base64.b64encode(f'{hello["clientId"]}:{hello["clientSecret"]}'.encode()).decode()
                self.access = self.refresh = None

            def http(self, method, path, headers, body=None):  # (status, text); status 0: no HTTP answer
                request = urllib.request.Request(self.base + path, None if body is None else body.encode(), headers, method=method)
                try:
                    with urllib.request.urlopen(request, timeout=30) as response:
                        return response.status, response.read().decode()
                except urllib.error.HTTPError as error:
                    return error.code, error.read().decode()
                except OSError as error:  # refused, reset, timed out
                    return 0, str(error)

            def grant(self, **form):  # caller holds self.lock; the token endpoint's status
                status, text = self.http("POST", "/oauth/token", {"Authorization": self.basic,
                    "Content-Type": "application/x-www-form-urlencoded"}, urllib.parse.urlencode(form))
                if status == 200:
                    tokens = json.loads(text)
                    self.access, self.refresh = tokens["access_token"], tokens.get("refresh_token", self.refresh)
                    self.generation += 1
                return status

            def login(self, m):
                with self.lock:
                    status = self.grant(grant_type="password", username=m["username"], password=m["password"])
                return {"ok": status == 200, "outcome": "ok" if status == 200 else "http_error", "status": status}

            def request(self, m):
                send = lambda token: self.http(m["method"], m["path"], {**m.get("headers", {}), "Authorization": "Bearer " + token}, m.get("body"))
                with self.lock:
                    token, generation = self.access, self.generation
                status, text = send(token)
                if status == 401:
                    with self.lock:  # one refresh; a late 401 finds a newer generation and only retries
                        if not self.dead and self.generation == generation:  # refused (not 429, 5xx, reset): signed out
                            self.dead = self.grant(grant_type="refresh_token", refresh_token=self.refresh) in (400, 401, 403)
                        if self.dead:
                            return {"ok": False, "outcome": "reauth_required", "status": 401}
                        token, renewed = self.access, self.generation != generation
                    if renewed:  # else the refresh failed for now: the app gets the 401
                        status, text = send(token)
                outcome = "transport_error" if status == 0 else "ok" if 200 <= status < 300 else "http_error"
                return {"ok": outcome == "ok", "outcome": outcome, "status": status or None, "body": text}

        client = None
        for line in sys.stdin:
            m = json.loads(line)
            if m["op"] == "hello":
                client = Client(m)
                answer({"id": m["id"], "ok": True, "driver": "python-urllib-example", "version": "1", "profiles": ["oauth2"]})
            elif m["op"] == "shutdown":
                answer({"id": m["id"], "ok": True})
                break
            else:
                work = client.login if m["op"] == "login" else client.request
                threading.Thread(target=lambda m=m, work=work: answer({"id": m["id"], **work(m)})).start()

        """#

    /// `profile`: a built-in dialect, or the dialect `authmock init --dialect` was given.
    static func scenario(schemaPath: String, profile: String = "oauth2") -> String {
        """
        # yaml-language-server: $schema=\(schemaPath)
        id: "100.1"
        name: my first case
        description: >
          A starting point: three calls meet an expired access token at once.
          A correct client refreshes exactly once and retries each call once.
          Change the steps and expectations to the behaviour you want to pin
          down; `authmock validate` checks the file, `authmock run` runs it.
        profile: \(profile)
        level: must
        steps:
          - login: {}
          - advance_clock: 3601
          - fault:
              match: {kind: resource}
              times: 3
              action: {type: gather, count: 3}
          - parallel:
              count: 3
              request: {method: GET, path: /api/items}
          - wait_for: all
        expect:
          refreshes: 1
          outcomes: {ok: all}
          attempts_per_call: {max: 2}

        """
    }

    static func swiftPackage(authmockPath: String) -> String {
        """
        // swift-tools-version:6.0
        import PackageDescription

        let package = Package(
            name: "my-authmock-driver",
            platforms: [.macOS(.v15)],
            dependencies: [
                // authmock's DriverKit; point this at your checkout of authmock.
                .package(path: "\(authmockPath)"),
            ],
            targets: [
                .executableTarget(name: "my-authmock-driver", dependencies: [.product(name: "DriverKit", package: "authmock")]),
            ]
        )

        """
    }

    static let swiftDriver = #"""
        import DriverKit
        import Foundation
        #if canImport(FoundationNetworking)
        import FoundationNetworking
        #endif

        // Replace MyClient with your own client: its sign-in, and a call that
        // goes through your refresh logic (interceptor, authenticator, ...).
        actor MyClient {
            let base: URL
            let basic: String
            var access = ""
            var refresh = ""

            init(_ hello: Hello) {
                base = URL(string: hello.baseURL)!
                basic = "Basic " + Data("\(hello.clientID):\(hello.clientSecret)".utf8).base64EncodedString()
            }

            func grant(_ form: String) async throws -> Bool {
                var request = URLRequest(url: base.appendingPathComponent("oauth/token"))
                request.httpMethod = "POST"
                request.setValue(basic, forHTTPHeaderField: "Authorization")
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(form.utf8)
                let (data, response) = try await URLSession.shared.data(for: request)
                guard (response as? HTTPURLResponse)?.statusCode == 200,
                      let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { return false }
                access = json["access_token"] as? String ?? ""
                refresh = json["refresh_token"] as? String ?? refresh
                return true
            }
        }

        struct MyDriver: DriverClient {
            let client: MyClient

            func login(username: String, password: String) async -> DriverOutcome {
                let ok = (try? await client.grant("grant_type=password&username=\(username)&password=\(password)")) ?? false
                return DriverOutcome(ok ? .ok : .httpError)
            }

            func request(_ request: DriverRequest) async -> DriverOutcome {
                // Send `request` through your client here; forward every header on every attempt.
                DriverOutcome(.unsupported, message: "wire your client in here")
            }
        }

        await Driver.run(name: "my-client", version: "0.1", profiles: ["oauth2"]) { hello in
            MyDriver(client: MyClient(hello))
        }

        """#
}
