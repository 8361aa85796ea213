import AuthmockScenario
import AuthmockTransports
import AuthmockServer
import Foundation
import Testing

/// A client that renews a token N seconds before it expires (Alamofire's
/// credential asks 30 s ahead, MSAL five minutes) meets a clock variant's
/// 2-s tokens as tokens that need renewing the moment they arrive. Declared
/// in hello (`renewalMargin`), the variant's short tokens live N s longer,
/// so they run out by its clock when they would for a client without a
/// margin, and the verdict is about its refresh logic again.
@Suite struct RenewalMarginTests {
    /// A client like Alamofire's AuthenticationInterceptor: before each call
    /// it renews while the token is within 30 s of expiry, and gives up with
    /// an error after five renewals in 30 s (its excessive-refresh guard).
    static let marginClient = #"""
        import base64, json, sys, time, urllib.request, urllib.error
        DECLARE = sys.argv[1] == "declare"
        state = {"access": "", "refresh": "", "expires": 0.0, "renewals": []}
        def send(obj):
            sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
        def grant(base, basic, form):
            body = "&".join(f"{k}={v}" for k, v in form.items()).encode()
            request = urllib.request.Request(base + "/oauth/token", data=body, method="POST", headers={
                "Authorization": "Basic " + basic, "Content-Type": "application/x-www-form-urlencoded"})
            with urllib.request.urlopen(request) as answer:
                tokens = json.load(answer)
            state["access"] = tokens["access_token"]
            state["refresh"] = tokens.get("refresh_token", state["refresh"])
            state["expires"] = time.time() + tokens.get("expires_in", 3600)
        base = basic = ""
        for line in sys.stdin:
            message = json.loads(line)
            op, mid = message["op"], message["id"]
            if op == "hello":
                base = message["baseURL"]
                basic = base64.b64encode(f'{message["clientId"]}:{message["clientSecret"]}'.encode()).decode()
                answer = {"id": mid, "ok": True, "driver": "margin-client", "version": "1", "profiles": ["oauth2"]}
                if DECLARE:
                    answer["renewalMargin"] = 30
                send(answer)
            elif op == "login":
                grant(base, basic, {"grant_type": "password", "username": message["username"], "password": message["password"]})
                send({"id": mid, "ok": True, "outcome": "ok"})
            elif op == "request":
                try:
                    while time.time() >= state["expires"] - 30:
                        now = time.time()
                        state["renewals"] = [t for t in state["renewals"] if now - t < 30] + [now]
                        if len(state["renewals"]) > 5:
                            raise RuntimeError("excessive refresh: 5 renewals in 30 s")
                        grant(base, basic, {"grant_type": "refresh_token", "refresh_token": state["refresh"]})
                    headers = dict(message.get("headers") or {})
                    headers["Authorization"] = "Bearer " + state["access"]
                    request = urllib.request.Request(base + message["path"], method=message.get("method", "GET"), headers=headers)
                    try:
                        with urllib.request.urlopen(request) as answer:
                            send({"id": mid, "ok": True, "outcome": "ok", "status": answer.status})
                    except urllib.error.HTTPError as error:
                        send({"id": mid, "ok": True, "outcome": "http_error", "status": error.code})
                except Exception as error:
                    send({"id": mid, "ok": True, "outcome": "transport_error", "message": str(error)})
            elif op == "shutdown":
                send({"id": mid, "ok": True})
                break
        """#

    func run(declaring: Bool) async throws -> CaseResult {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("margin-client-\(UUID()).py")
        try Self.marginClient.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let cases = try builtInCases().filter { $0.0.id == "3.1-clock" && $0.1 == "oauth2" }
        try #require(cases.count == 1)
        let results = await ScenarioRunner.run(
            cases, options: RunOptions(driver: "python3 \(script.path) \(declaring ? "declare" : "hide")", jobs: 1))
        return try #require(results.first)
    }

    @Test func aDeclaredMarginIsJudgedOnItsRefreshLogic() async throws {
        let declared = try await run(declaring: true)
        #expect(declared.verdict == .pass, "\(Reports.details(declared))")
        // Without it, every 2-s token needs renewing on arrival: the guard
        // stops the client, and the verdict would be about its margin.
        let hidden = try await run(declaring: false)
        #expect(hidden.verdict == .fail)
        #expect(hidden.calls.contains { $0.message?.contains("excessive refresh") == true }, "\(hidden.calls)")
    }

    @Test func onlyAClockVariantsShortTokensAreLengthened() throws {
        let variant = try #require(try builtInCases().first { $0.0.id == "2.3-clock" }?.0)
        let lengthened = variant.lengthened(forRenewalMargin: 29.5)
        #expect(lengthened.server["sign_in_access_ttl"] == .integer(2 + 30))
        #expect(lengthened.server["access_ttl"] == .integer(3600))
        let plain = try #require(try builtInCases().first { $0.0.id == "3.1" }?.0)
        #expect(plain.lengthened(forRenewalMargin: 30).server.values.isEmpty == plain.server.values.isEmpty)
        #expect(plain.lengthened(forRenewalMargin: 30).server["access_ttl"] == plain.server["access_ttl"])
    }
}
