import Foundation

/// What `authmock init` writes. The Python driver is the one
/// docs/writing-a-driver.md shows (a test keeps the two identical).
enum Templates {
    static let pythonDriver = #"""
        #!/usr/bin/env python3
        import base64, json, sys, threading, urllib.error, urllib.parse, urllib.request

        out = threading.Lock()
        def answer(message):
            with out:
                sys.stdout.write(json.dumps(message) + "\n")
                sys.stdout.flush()

        class Client:
            def __init__(self, hello):
                self.base, self.lock, self.generation, self.dead = hello["baseURL"], threading.Lock(), 0, False
                self.basic = "Basic " + base64.b64encode(f'{hello["clientId"]}:{hello["clientSecret"]}'.encode()).decode()
                self.access = self.refresh = None

            def http(self, method, path, headers, body=None):
                request = urllib.request.Request(self.base + path, None if body is None else body.encode(), headers, method=method)
                try:
                    with urllib.request.urlopen(request, timeout=30) as response:
                        return response.status, response.read().decode()
                except urllib.error.HTTPError as error:
                    return error.code, error.read().decode()

            def grant(self, **form):  # caller holds self.lock
                status, text = self.http("POST", "/oauth/token", {"Authorization": self.basic,
                    "Content-Type": "application/x-www-form-urlencoded"}, urllib.parse.urlencode(form))
                if status == 200:
                    tokens = json.loads(text)
                    self.access, self.refresh = tokens["access_token"], tokens.get("refresh_token", self.refresh)
                    self.generation += 1
                return status == 200

            def login(self, m):
                with self.lock:
                    ok = self.grant(grant_type="password", username=m["username"], password=m["password"])
                return {"ok": ok, "outcome": "ok" if ok else "http_error"}

            def request(self, m):
                send = lambda token: self.http(m["method"], m["path"], {**m.get("headers", {}), "Authorization": "Bearer " + token}, m.get("body"))
                with self.lock:
                    token, generation = self.access, self.generation
                status, text = send(token)
                if status == 401:
                    with self.lock:  # one refresh; a late 401 finds a newer generation and only retries
                        if self.dead or (self.generation == generation and not self.grant(grant_type="refresh_token", refresh_token=self.refresh)):
                            self.dead = True
                            return {"ok": False, "outcome": "reauth_required", "status": 401}
                        token = self.access
                    status, text = send(token)
                return {"ok": 200 <= status < 300, "outcome": "ok" if 200 <= status < 300 else "http_error", "status": status, "body": text}

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

    static func scenario(schemaPath: String) -> String {
        """
        # yaml-language-server: $schema=\(schemaPath)
        id: "100.1"
        name: my first case
        description: >
          A starting point: three calls meet an expired access token at once.
          A correct client refreshes exactly once and retries each call once.
          Change the steps and expectations to the behaviour you want to pin
          down; `authmock validate` checks the file, `authmock run` runs it.
        profile: oauth2
        level: must
        steps:
          - login: {}
          - advance_clock: 301
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
