import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// `authmock proxy` in front of a real backend: a Django server with
/// djangorestframework-simplejwt (Tests/EndToEndTests/Fixtures/simplejwt-server.py),
/// reached only through the proxy, as an app would.
@Suite(.serialized) struct ProxyTests {
    struct Reply {
        var status: Int
        var headers: HTTPHeaders
        var body: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    }

    static func send(_ method: HTTPMethod, _ url: String, json: String? = nil, bearer: String? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    /// The journal's entries, oldest first.
    static func journal(_ proxy: ServingBinary) async throws -> [[String: Any]] {
        try await send(.GET, proxy.baseURL + "/_authmock/journal").json["entries"] as? [[String: Any]] ?? []
    }

    static func signIn(_ proxy: ServingBinary) async throws -> (access: String, refresh: String) {
        let login = try await send(.POST, proxy.baseURL + "/api/token/", json: #"{"username": "alice", "password": "wonderland"}"#)
        #expect(login.status == 200, "\(login.body)")
        return (try #require(login.json["access"] as? String), try #require(login.json["refresh"] as? String))
    }

    static func refresh(_ proxy: ServingBinary, _ token: String) async throws -> Reply {
        try await send(.POST, proxy.baseURL + "/api/token/refresh/", json: #"{"refresh": "\#(token)"}"#)
    }

    static func startBoth(_ arguments: [String] = []) throws -> (FixtureServer, ServingBinary) {
        let real = try FixtureServer("simplejwt-server.py", needs: "django, djangorestframework and djangorestframework-simplejwt")
        do {
            let proxy = try ServingBinary(
                ["--upstream", real.baseURL, "--profile", "simplejwt", "--log-level", "error"] + arguments, command: "proxy")
            return (real, proxy)
        } catch {
            real.stop()
            throw error
        }
    }

    /// Calls and refreshes reach the real server; an access token older
    /// than --expire-after (the proxy's clock moved past it) gets
    /// SimpleJWT's own expired answer from the proxy; the journal names each
    /// token the backend handed out and its state on arrival.
    @Test func forwardsLearnsTokensAndExpiresThemEarly() async throws {
        let (real, proxy) = try Self.startBoth(["--expire-after", "30s"])
        defer {
            _ = proxy.interrupt()
            real.stop()
        }
        #expect(proxy.banner.contains("forwarding to \(real.baseURL)"), "\(proxy.banner)")
        let first = try await Self.signIn(proxy)
        let me = try await Self.send(.GET, proxy.baseURL + "/api/me", bearer: first.access)
        #expect(me.status == 200 && me.json["sub"] as? String == "alice", "the real server's answer: \(me.body)")

        _ = try await Self.send(.POST, proxy.baseURL + "/_authmock/clock/advance", json: #"{"seconds": 31}"#)
        let expired = try await Self.send(.GET, proxy.baseURL + "/api/me", bearer: first.access)
        #expect(expired.status == 401, "\(expired.body)")
        #expect(expired.json["code"] as? String == "token_not_valid", "SimpleJWT's expired answer: \(expired.body)")
        #expect(expired.headers.first(name: "WWW-Authenticate") == #"Bearer realm="api""#)

        let renewed = try await Self.refresh(proxy, first.refresh)
        #expect(renewed.status == 200, "the real server rotates: \(renewed.body)")
        let second = try #require(renewed.json["access"] as? String)
        let secondRefresh = try #require(renewed.json["refresh"] as? String)
        #expect(try await Self.send(.GET, proxy.baseURL + "/api/me", bearer: second).status == 200)
        // The spent refresh token: the real server has blacklisted it.
        let reused = try await Self.refresh(proxy, first.refresh)
        #expect(reused.status == 401 && reused.body.contains("blacklisted"), "\(reused.body)")

        let entries = try await Self.journal(proxy)
        #expect(entries.map { $0["kind"] as? String ?? "" } == ["login", "resource", "resource", "refresh", "resource", "refresh"])
        #expect(entries.map { $0["status"] as? Int ?? 0 } == [200, 200, 401, 200, 200, 401])
        let states = entries.map { (($0["accessToken"] ?? $0["refreshToken"]) as? [String: Any])?["state"] as? String ?? "-" }
        #expect(states == ["-", "valid", "expired", "valid", "valid", "superseded"], "\(entries)")
        #expect(entries[2]["situation"] as? String == "access_token_expired")
        // SimpleJWT's tokens carry a `jti`: the journal names them by it.
        let issued = [entries[0], entries[3]].flatMap { [$0["issuedAccess"] as? String, $0["issuedRefresh"] as? String] }.compactMap { $0 }
        #expect(Set(issued).count == 4, "four tokens, four names: \(issued)")
        #expect((entries[1]["accessToken"] as? [String: Any])?["id"] as? String == issued[0])
        #expect((entries[5]["refreshToken"] as? [String: Any])?["id"] as? String == issued[1])
        #expect(entries[5]["situation"] as? String ?? "" != "refresh_token_as_access_token", "a refresh's refusal is a refresh token's")

        // The control API lists what the proxy learned, and expires or revokes it there.
        let tokens = try await Self.send(.GET, proxy.baseURL + "/_authmock/tokens").json
        #expect((tokens["access"] as? [[String: Any]])?.count == 2 && (tokens["refresh"] as? [[String: Any]])?.count == 2, "\(tokens)")
        _ = try await Self.send(.POST, proxy.baseURL + "/_authmock/tokens/revoke", json: #"{"kind": "refresh"}"#)
        let refused = try await Self.refresh(proxy, secondRefresh)
        #expect(refused.status == 401, "a refresh token revoked at the proxy: \(refused.body)")
        #expect((try await Self.journal(proxy)).last?["situation"] as? String == "refresh_token_revoked")
    }

    /// docs/proxy.md's walkthrough, run as written.
    @Test func walkthroughRunsAsDocumented() async throws {
        let (real, proxy) = try Self.startBoth(["--expire-after", "30s"])
        defer {
            _ = proxy.interrupt()
            real.stop()
        }
        let doc = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/proxy.md"), encoding: .utf8)
        let section = try #require(doc.firstMatch(of: /<!-- walkthrough:begin -->\n```sh\n([\s\S]*?)```\n<!-- walkthrough:end -->/))
        let run = try await runProcess(
            "/bin/bash", ["-euo", "pipefail", "-c", String(section.1)], environment: ["PROXY": proxy.baseURL], mergeOutput: true)
        #expect(run.status == 0, "\(run.stdout)")
        for line in [
            #"{"sub":"alice"}"#, "HTTP/1.1 401 Unauthorized", "no answer (curl exit 52)",
            #"{"detail":"Token is blacklisted","code":"token_not_valid"}"#,
            "3 resource 401 expired", "4 refresh 200 valid undelivered", "5 refresh 401 superseded",
        ] {
            #expect(run.stdout.contains(line), "docs/proxy.md says it prints \(line): \(run.stdout)")
        }
    }

    /// A lost answer: the refresh reaches the real server, which rotates,
    /// and the proxy drops its answer. The client's retry with the token
    /// it still holds is then refused by the real server: the rotation happened.
    @Test func aLostRefreshAnswerRotatesAtTheRealServer() async throws {
        let (real, proxy) = try Self.startBoth()
        defer {
            _ = proxy.interrupt()
            real.stop()
        }
        let first = try await Self.signIn(proxy)
        let rule = #"{"match": {"kind": "refresh"}, "times": 1, "action": {"type": "drop-response"}}"#
        #expect(try await Self.send(.POST, proxy.baseURL + "/_authmock/faults", json: rule).status == 201)
        await #expect(throws: (any Error).self) { try await Self.refresh(proxy, first.refresh) }
        let retry = try await Self.refresh(proxy, first.refresh)
        #expect(retry.status == 401 && retry.json["code"] as? String == "token_not_valid", "\(retry.body)")
        let entries = try await Self.journal(proxy)
        let lost = try #require(entries.first { $0["kind"] as? String == "refresh" })
        #expect(lost["undelivered"] as? Bool == true && lost["status"] as? Int == 200, "\(lost)")
        #expect(lost["issuedRefresh"] is String, "the tokens the client never saw are named: \(lost)")
        #expect(((entries.last?["refreshToken"]) as? [String: Any])?["state"] as? String == "superseded")
    }

    /// `--judge` on the traffic through the proxy: two refreshes of one
    /// token at once, the refused one's token presented again, and a call
    /// with the old access token after the new one was delivered get the
    /// suite's findings and its cause; one refresh after the expiry passes.
    @Test func judgesWhatTheClientDidOnItsOwn() async throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-judge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: reports) }
        let junit = reports.appendingPathComponent("verdicts.xml")
        let html = reports.appendingPathComponent("verdicts.html")
        let (real, proxy) = try Self.startBoth(["--expire-after", "30s", "--judge", "--junit", junit.path, "--html", html.path])
        defer {
            _ = proxy.interrupt()
            real.stop()
        }
        let verdictsURL = proxy.baseURL + "/_authmock/verdicts"
        #expect(try await Self.send(.GET, verdictsURL).json["verdict"] as? String == "nothing-yet")

        // A correct client: one refresh after the token expired, then the new token.
        let first = try await Self.signIn(proxy)
        _ = try await Self.send(.POST, proxy.baseURL + "/_authmock/clock/advance", json: #"{"seconds": 31}"#)
        #expect(try await Self.send(.GET, proxy.baseURL + "/api/me", bearer: first.access).status == 401)
        let renewed = try await Self.refresh(proxy, first.refresh)
        let access = try #require(renewed.json["access"] as? String)
        #expect(try await Self.send(.GET, proxy.baseURL + "/api/me", bearer: access).status == 200)
        let good = try await Self.send(.GET, verdictsURL).json
        #expect(good["verdict"] as? String == "pass", "\(good)")
        #expect(good["logins"] as? Int == 1)

        // A client without single flight: two refreshes of one token at once,
        // and a call with the access token it had before.
        let second = try await Self.signIn(proxy)
        _ = try await Self.send(.POST, proxy.baseURL + "/_authmock/clock/advance", json: #"{"seconds": 31}"#)
        async let one = Self.refresh(proxy, second.refresh)
        async let two = Self.refresh(proxy, second.refresh)
        let answers = try await [one, two]
        #expect(answers.contains { $0.status == 200 }, "\(answers.map(\.body))")
        // Past the 50 ms in which a delivered token is not yet counted as the client's.
        try await Task.sleep(for: .milliseconds(200))
        _ = try await Self.send(.GET, proxy.baseURL + "/api/me", bearer: second.access)
        let bad = try await Self.send(.GET, verdictsURL).json
        #expect(bad["verdict"] as? String == "fail", "\(bad)")
        let failed = (bad["findings"] as? [[String: Any]] ?? []).filter { $0["passed"] as? Bool == false }.compactMap { $0["expectation"] as? String }
        #expect(failed.contains("superfluous_refreshes") && failed.contains("stale_token_uses"), "\(bad)")
        let causes = (bad["causes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(causes.first == "no-single-flight", "\(causes)")
        let evidence = (bad["findings"] as? [[String: Any]] ?? []).flatMap { $0["evidence"] as? [String] ?? [] }.joined(separator: "\n")
        #expect(evidence.contains("L2.R1"), "tokens named by login and generation: \(evidence)")
        // SimpleJWT refuses a blacklisted token and keeps the login: no word of a revoked login.
        #expect(!(bad["findings"] as? [[String: Any]] ?? []).contains { ($0["message"] as? String ?? "").contains("revoked the login") })

        // At shutdown: the verdict in a few lines.
        let (status, _) = proxy.interrupt()
        #expect(status == 0)
        let summary = proxy.remainingOutput()
        #expect(summary.contains("verdict: FAIL") && summary.contains("[no-single-flight]"), "\(summary)")
        // And the reports of a run, with the traffic as its one case run.
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.contains("<failure") && xml.contains("superfluous_refreshes"), "\(xml.prefix(1500))")
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.contains("data-cause=\"no-single-flight\"") && page.contains("class=\"timeline\""), "\(page.prefix(1500))")
    }

    /// An upload over --max-body (a `Content-Length` one) goes to the
    /// backend as it comes, whole, and is journaled by its length.
    @Test func anUploadOverMaxBodyStreamsThrough() async throws {
        let (real, proxy) = try Self.startBoth()
        defer {
            _ = proxy.interrupt()
            real.stop()
        }
        let tokens = try await Self.signIn(proxy)
        let upload = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var request = HTTPClientRequest(url: proxy.baseURL + "/api/uploads")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(tokens.access)")
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = .bytes(ByteBuffer(bytes: upload))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let answer = try JSONSerialization.jsonObject(with: Data(buffer: try await response.body.collect(upTo: 1 << 16))) as? [String: Any]
        #expect(response.status.code == 200, "\(answer ?? [:])")
        #expect(answer?["bytes"] as? Int == upload.count)
        let digest = SHA256.hash(data: upload).map { String(format: "%02x", $0) }.joined()
        #expect(answer?["sha256"] as? String == digest, "the backend got every byte, in order")
        let entry = try #require(try await Self.journal(proxy).last { $0["path"] as? String == "/api/uploads" })
        #expect(entry["bodyBytes"] as? Int == upload.count && entry["bodySHA256"] == nil, "\(entry)")
    }

    /// Without --judge the verdicts are refused with a sentence that says how to get them.
    @Test func verdictsNeedJudge() async throws {
        let server = try ServingBinary(["--log-level", "error"])
        defer { _ = server.interrupt() }
        let reply = try await Self.send(.GET, server.baseURL + "/_authmock/verdicts")
        #expect(reply.status == 409 && reply.json["error"] as? String == "not_judging", "\(reply.body)")
        #expect(reply.body.contains("--judge"))
    }

    /// A backend that renews the access token in an API answer's header
    /// (the header-rotation dialect, served here by `authmock serve`): the
    /// proxy learns the renewed token there, in the login of the refresh
    /// token the call presented.
    @Test func learnsTheAccessTokenAHeaderRenews() async throws {
        let backend = try ServingBinary(["--profile", "header-rotation", "--log-level", "error"])
        defer { _ = backend.interrupt() }
        let proxy = try ServingBinary(["--upstream", backend.baseURL, "--profile", "header-rotation", "--log-level", "error"], command: "proxy")
        defer { _ = proxy.interrupt() }
        let login = try await Self.send(.POST, proxy.baseURL + "/auth/login", json: #"{"username": "alice", "password": "wonderland"}"#)
        let refresh = try #require(login.json["refreshToken"] as? String, "\(login.body)")
        let renewal = try await Self.send(.GET, proxy.baseURL + "/api/me", bearer: refresh)
        let header = try #require(renewal.headers.first(name: "Authorization"), "the backend renews in Authorization: \(renewal.headers)")
        let renewed = String(header.dropFirst("Bearer ".count))
        #expect(try await Self.send(.GET, proxy.baseURL + "/api/me", bearer: renewed).status == 200)
        let entries = try await Self.journal(proxy)
        #expect(entries.map { $0["kind"] as? String ?? "" } == ["login", "refresh", "resource"])
        let issued = try #require(entries[1]["issuedAccess"] as? String, "the renewal's token is learned: \(entries[1])")
        let presented = try #require(entries[2]["accessToken"] as? [String: Any])
        #expect(presented["id"] as? String == issued && presented["state"] as? String == "valid", "\(presented)")
    }

    /// What reaches the backend: the app's headers but the hop-by-hop ones
    /// (and those `Connection` names), where the app was addressed, and no
    /// `Accept-Encoding` on a request whose answer the proxy reads for
    /// tokens (a compressed one would hide them); the body as sent.
    @Test func forwardsTheRequestAsTheAppSentItButItsHopByHopHeaders() async throws {
        let echo = try FixtureServer("echo-server.py", needs: "python3")
        defer { echo.stop() }
        let proxy = try ServingBinary(["--upstream", echo.baseURL + "/base", "--log-level", "error"], command: "proxy")
        defer { _ = proxy.interrupt() }
        func seen(_ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> [String: Any] {
            var request = HTTPClientRequest(url: proxy.baseURL + path)
            request.method = method
            for (name, value) in [
                ("Connection", "keep-alive, X-Drop-Me"), ("X-Drop-Me", "1"), ("Keep-Alive", "timeout=5"), ("X-Keep", "kept"),
                ("Accept-Encoding", "gzip"), ("Authorization", "Bearer opaque"),
            ] { request.headers.add(name: name, value: value) }
            if let body {
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: body))
            }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            return (try JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:]
        }
        let call = try await seen(.GET, "/orders?page=2")
        #expect(call["path"] as? String == "/base/orders?page=2", "the upstream URL's path prefixes it: \(call)")
        let headers = call["headers"] as? [String: String] ?? [:]
        #expect(headers["x-keep"] == "kept" && headers["authorization"] == "Bearer opaque" && headers["accept-encoding"] == "gzip", "\(headers)")
        #expect(headers["x-drop-me"] == nil && headers["keep-alive"] == nil, "hop-by-hop headers stay at the proxy: \(headers)")
        #expect(headers["x-forwarded-host"]?.hasPrefix("127.0.0.1:") == true && headers["x-forwarded-proto"] == "http", "\(headers)")
        let token = try await seen(.POST, "/oauth/token", body: "grant_type=password&username=alice&password=wonderland")
        #expect(token["body"] as? String == "grant_type=password&username=alice&password=wonderland")
        #expect((token["headers"] as? [String: String])?["accept-encoding"] == nil, "a token answer is asked for plain: \(token)")
    }

    /// An https backend with its own certificate: refused with the way out,
    /// then trusted with --upstream-ca.
    @Test func anHTTPSBackendsOwnCertificateIsTrustedWithUpstreamCA() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-upstream-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let backend = try ServingBinary(["--tls", "--tls-dir", directory.path, "--log-level", "error"])
        defer { _ = backend.interrupt() }
        let upstream = "https://127.0.0.1:\(backend.port)"
        let untrusting = try ServingBinary(["--upstream", upstream, "--log-level", "error"], command: "proxy")
        defer { _ = untrusting.interrupt() }
        let refused = try await Self.send(.GET, untrusting.baseURL + "/health")
        #expect(refused.status == 502 && refused.body.contains("--upstream-ca"), "\(refused.body)")
        let certificate = directory.appendingPathComponent("authmock-localhost.crt").path
        let trusting = try ServingBinary(["--upstream", upstream, "--upstream-ca", certificate, "--log-level", "error"], command: "proxy")
        defer { _ = trusting.interrupt() }
        let health = try await Self.send(.GET, trusting.baseURL + "/health")
        #expect(health.status == 200 && health.json["status"] as? String == "ok", "\(health.body)")
    }

    /// `--plan`: the step after the first refresh loses the next refresh's
    /// answer, as a person would have clicked it, and says so in the log (a
    /// later step clears the rules); a
    /// plan that does not check stops the start at its file, line and column.
    @Test func aPlanActsOnTheTrafficAsItComes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let plan = directory.appendingPathComponent("plan.yaml")
        try """
        plan:
          - after_refreshes: 1
            fault: {match: {kind: refresh}, times: 1, action: {type: drop-response}}
          - every: 1h
            expire: {kind: access}
          - after_refreshes: 2
            clear_faults: {}

        """.write(to: plan, atomically: true, encoding: .utf8)
        let (real, proxy) = try Self.startBoth(["--plan", plan.path, "--log-level", "notice"])
        defer { real.stop() }
        let first = try await Self.signIn(proxy)
        let renewed = try await Self.refresh(proxy, first.refresh)
        let second = try #require(renewed.json["refresh"] as? String, "\(renewed.body)")
        // The plan's fault is installed once the first refresh has arrived: the second meets it.
        var lost = false
        for _ in 0..<50 where !lost {
            do {
                _ = try await Self.refresh(proxy, second)
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                lost = true
            }
        }
        #expect(lost, "the refresh after the first lost its answer")
        let entries = try await Self.journal(proxy)
        #expect(
            entries.contains { $0["kind"] as? String == "refresh" && $0["undelivered"] as? Bool == true && $0["fault"] as? Int == 1 }, "\(entries)")
        let (_, log) = proxy.interrupt()
        #expect(log.contains("plan step 1 (line 2, after 1 refresh): fault: fault rule 1"), "\(log)")
        #expect(log.contains("plan step 3 (line 6, after 2 refreshes): clear_faults: removed "), "\(log)")

        let bad = directory.appendingPathComponent("bad.yaml")
        try "plan:\n  - after: soon\n    expire: {kind: access}\n".write(to: bad, atomically: true, encoding: .utf8)
        let refused = try await runAuthmock(["proxy", "--upstream", real.baseURL, "--port", "0", "--plan", bad.path])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("bad.yaml:2:12: plan[0].after: expected a duration"), "\(refused.stderr)")
    }

    /// A backend that cannot be reached: a 502 that says why, at once.
    @Test func anUnreachableBackendIsA502ThatSaysWhy() async throws {
        let closed = try ServingBinary(["--log-level", "error"])
        let port = closed.port
        _ = closed.interrupt()
        let proxy = try ServingBinary(["--upstream", "http://127.0.0.1:\(port)", "--log-level", "error"], command: "proxy")
        defer { _ = proxy.interrupt() }
        let started = Date()
        let reply = try await Self.send(.GET, proxy.baseURL + "/api/me", bearer: "whatever")
        #expect(reply.status == 502)
        #expect(reply.json["error"] as? String == "upstream_unreachable")
        #expect((reply.json["message"] as? String ?? "").contains("connection refused"), "\(reply.body)")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func aBadUpstreamOrDurationIsRefusedAtStart() async throws {
        for (arguments, said) in [
            (["--upstream", "ftp://example.test"], "no http:// or https:// URL"),
            (["--upstream", "http://127.0.0.1:1", "--expire-after", "soon"], "--expire-after must be a duration"),
        ] {
            let run = try await runAuthmock(["proxy", "--port", "0"] + arguments)
            #expect(run.status != 0)
            #expect(run.stderr.contains(said), "\(run.stderr)")
        }
    }
}
