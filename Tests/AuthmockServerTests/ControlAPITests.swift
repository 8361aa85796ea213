import AuthmockCore
import AuthmockModel
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The control API through HTTP: clock, tokens, faults, journal, reset, protection.
struct ControlAPITests {
    @Test func discoveryListsEveryRoute() async throws {
        try await TestServer.run { server in
            let json = try await server.control(.get, "").json()
            let routes = try #require(json["routes"] as? [[String: Any]]).map { "\($0["method"]!) \($0["path"]!)" }
            for route in [
                "POST /_authmock/reset", "GET /_authmock/clock", "POST /_authmock/clock/advance", "POST /_authmock/clock/set",
                "GET /_authmock/tokens", "POST /_authmock/tokens/expire", "POST /_authmock/tokens/revoke",
                "GET /_authmock/faults", "POST /_authmock/faults", "DELETE /_authmock/faults",
                "GET /_authmock/journal", "GET /_authmock/journal/count",
            ] {
                #expect(routes.contains(route), "discovery lacks \(route)")
            }
            #expect(try await server.control(.get, "/").status == .ok)
        }
    }

    @Test func clockAdvanceExpiresTokensWithoutWaiting() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            let advanced = try await server.control(.post, "/clock/advance", #"{"seconds": 301}"#).json()
            #expect(advanced["offsetSeconds"] as? Double == 301)
            let response = try await server.get("/api/me", bearer: pair.access)
            #expect(response.status == .unauthorized)
            #expect(response.errorDescription == "Access token expired")
            #expect(try await server.control(.get, "/clock").json()["offsetSeconds"] as? Double == 301)
            // Issuing reads the same clock: a token issued now is valid now.
            let fresh = try await server.login()
            #expect(try await server.get("/api/me", bearer: fresh.access).status == .ok)
            _ = try await server.control(.post, "/clock/set", #"{"offsetSeconds": 0}"#)
            #expect(try await server.get("/api/me", bearer: pair.access).status == .ok)
        }
    }

    @Test(arguments: [
        (#"{"seconds": -5}"#, "invalid_value", "seconds must be a finite number >= 0"),
        (#"{"secnds": 5}"#, "unknown_field", "unknown field 'secnds' (did you mean 'seconds'?)"),
        (#"{"seconds": "61"}"#, "invalid_value", "field 'seconds' must be a number, got a string"),
        (#"{"seconds": true}"#, "invalid_value", "field 'seconds' must be a number, got a boolean"),
        (#"{}"#, "missing_field", "missing required field 'seconds'"),
        (#"{"seconds": 1"#, "invalid_json", "body is not valid JSON"),
        (#"[1, 2]"#, "invalid_json", "body must be a JSON object, got an array"),
    ])
    func badClockInputIsA400(body: String, code: String, message: String) async throws {
        try await TestServer.run { server in
            let response = try await server.control(.post, "/clock/advance", body)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == code)
            #expect((try response.json()["message"] as? String)?.hasPrefix(message) == true, "\(response.text)")
            #expect(try await server.control(.get, "/clock").json()["offsetSeconds"] as? Double == 0)
        }
    }

    /// A far-future clock once made token times overflow Int and trap the
    /// process on /api/me and introspection; two huge advances made it infinite.
    @Test func theClockStaysWithinAHundredYearsAndTheServerKeepsAnswering() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            for (path, body) in [
                ("/clock/set", #"{"offsetSeconds": 9.3e18}"#), ("/clock/set", #"{"offsetSeconds": -9.3e18}"#),
                ("/clock/advance", #"{"seconds": 1e308}"#),
            ] {
                let response = try await server.control(.post, path, body)
                #expect(response.status == .badRequest, "\(path) \(body)")
                #expect(response.errorCode == "invalid_value")
                #expect(response.text.contains("100 years"), "\(response.text)")
            }
            #expect(try await server.control(.post, "/clock/set", #"{"offsetSeconds": 3155000000}"#).status == .ok)
            #expect(try await server.control(.post, "/clock/advance", #"{"seconds": 1000000}"#).status == .badRequest)
            // Every token is expired a century later, and the server says so.
            #expect(try await server.get("/api/me", bearer: pair.access).status == .unauthorized)
            let introspection = try await server.form("/oauth/introspect", [("token", pair.access)])
            #expect(introspection.status == .ok)
            #expect(try introspection.json()["active"] as? Bool == false)
            #expect(
                try await server.form("/oauth/token", [("grant_type", "password"), ("username", "alice"), ("password", "wonderland")]).status == .ok)
        }
    }

    /// Pruned tokens, presented over HTTP, get the documented errors; the
    /// control API shows what was pruned and what the journal holds.
    @Test func prunedTokensGetTheDocumentedErrors() async throws {
        var options = ServerOptions(signingKey: .random())
        options.tokens = TokenSettings(accessTTL: 1, refreshTTL: 20)
        options.tokens.pruneAfterSeconds = 5
        try await TestServer.run(options) { server in
            let first = try await server.login()
            let firstRefresh = try #require(first.refresh)
            let second = try TokenPair(try await server.refresh(firstRefresh))
            _ = try await server.control(.post, "/clock/advance", #"{"seconds": 12}"#)
            let prune = try await server.control(.post, "/tokens/prune").json()
            let removed = try #require(prune["removed"] as? [String: Any])
            #expect(removed["access"] as? Int == 2 && removed["refresh"] as? Int == 1, "\(prune)")
            let me = try await server.get("/api/me", bearer: first.access)
            #expect(me.status == .unauthorized && me.text.contains("Access token expired"), "\(me.text)")
            // The rotated refresh token, record gone: reuse, the login revoked.
            let reuse = try await server.refresh(firstRefresh)
            #expect(reuse.status == .badRequest && reuse.errorCode == "invalid_grant", "\(reuse.text)")
            #expect(try await server.refresh(try #require(second.refresh)).errorCode == "invalid_grant")
            let tokens = try await server.control(.get, "/tokens").json()
            #expect((tokens["pruned"] as? [String: Any])?["access"] as? Int == 2, "\(tokens)")
            let journal = try await server.control(.get, "/journal").json()
            #expect((journal["held"] as? Int ?? 0) > 0 && (journal["heldBytes"] as? Int ?? 0) > 0, "\(journal)")
        }
    }

    /// `limit` pages the journal (it used to be accepted and ignored).
    @Test func theJournalReadsInPagesWithLimitAndSince() async throws {
        try await TestServer.run { server in
            for index in 0..<7 { _ = try await server.send(.get, "/nowhere/\(index)") }
            var seen: [String] = []
            var since = 0
            while true {
                let page = try await server.control(.get, "/journal?limit=3&since=\(since)").json()
                let entries = try #require(page["entries"] as? [[String: Any]])
                #expect(entries.count <= 3)
                guard let last = page["last"] as? Int else { break }
                seen += entries.compactMap { $0["path"] as? String }
                since = last
            }
            #expect(seen == (0..<7).map { "/nowhere/\($0)" })
            #expect(try await server.control(.get, "/journal?limit=0").errorCode == "invalid_value")
            #expect(try await server.control(.get, "/journal/count?limit=2").errorCode == "invalid_value")
            #expect(try await server.control(.get, "/journal?limt=2").text.contains("did you mean 'limit'"))
        }
    }

    @Test func theJournalIsBoundedByBytesAsWellAsEntries() async throws {
        var options = ServerOptions(signingKey: .random())
        options.journalMaxBytes = 65_536
        try await TestServer.run(options) { server in
            for index in 0..<600 { _ = try await server.send(.get, "/nowhere/\(index)/" + String(repeating: "x", count: 200)) }
            let journal = try await server.control(.get, "/journal").json()
            let held = try #require(journal["held"] as? Int), bytes = try #require(journal["heldBytes"] as? Int)
            #expect(bytes <= 65_536 && held < 600, "\(held) entries, \(bytes) bytes")
            #expect(journal["dropped"] as? Int == 600 - held)
            #expect((journal["entries"] as? [[String: Any]])?.last?["path"] as? String == "/nowhere/599/" + String(repeating: "x", count: 200))
        }
    }

    @Test func expireAndRevokeBySelector() async throws {
        var options = ServerOptions(signingKey: .random())
        options.directory.users.append(User(username: "bob", password: "builder"))
        try await TestServer.run(options) { server in
            let alice = try await server.login()
            let bobResponse = try await server.form("/oauth/token", [("grant_type", "password"), ("username", "bob"), ("password", "builder")])
            let bob = try TokenPair(bobResponse)

            let expired = try await server.control(.post, "/tokens/expire", #"{"kind": "access", "subject": "alice"}"#).json()
            #expect(expired["access"] as? Int == 1)
            #expect(expired["refresh"] as? Int == 0)
            #expect(try await server.get("/api/me", bearer: alice.access).errorDescription == "Access token expired")
            #expect(try await server.get("/api/me", bearer: bob.access).status == .ok)
            // Alice's refresh token still works: only her access token was expired.
            let refreshed = try TokenPair(try await server.refresh(alice.refresh!))

            let bobJTI = try #require(try await server.get("/api/me", bearer: bob.access).json()["claims"] as? [String: Any])["jti"] as! String
            let revoked = try await server.control(.post, "/tokens/revoke", #"{"kind": "access", "jti": "\#(bobJTI)"}"#).json()
            #expect(revoked["access"] as? Int == 1)
            #expect(try await server.get("/api/me", bearer: bob.access).errorDescription == "Access token revoked")

            _ = try await server.control(.post, "/tokens/expire", #"{"kind": "refresh", "subject": "alice"}"#)
            #expect(try await server.refresh(refreshed.refresh!).errorDescription == "Refresh token expired")
            _ = try await server.control(.post, "/tokens/revoke", #"{"kind": "refresh", "subject": "bob"}"#)
            #expect(try await server.refresh(bob.refresh!).errorDescription == "Refresh token revoked")
        }
    }

    @Test func revokingAFamilyEndsTheLogin() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            let family = try #require(try await server.get("/api/me", bearer: pair.access).json()["claims"] as? [String: Any])["sid"] as! String
            _ = try await server.control(.post, "/tokens/revoke", #"{"family": "\#(family)"}"#)
            #expect(try await server.get("/api/me", bearer: pair.access).status == .unauthorized)
            #expect(try await server.refresh(pair.refresh!).errorDescription == "Refresh token revoked")
            let listing = try await server.control(.get, "/tokens").json()
            let families = try #require(listing["families"] as? [[String: Any]])
            #expect(families.first?["state"] as? String == "revoked")
        }
    }

    /// A respond rule cannot make an answer HTTP forbids: a 1xx as the final
    /// answer, a 204 or 304 with a body, framing headers that contradict the body.
    @Test(arguments: [
        (#"{"type": "respond", "status": 101}"#, "200 to 599"),
        (#"{"type": "respond", "status": 204, "body": "x"}"#, "a 204 answer has no body"),
        (#"{"type": "respond", "status": 304, "body": "x"}"#, "a 304 answer has no body"),
        (#"{"type": "respond", "status": 200, "headers": {"Content-Length": "99"}, "body": "x"}"#, "Content-Length is set by the server"),
        (#"{"type": "respond", "status": 200, "headers": {"transfer-encoding": "chunked"}}"#, "transfer-encoding is set by the server"),
    ])
    func respondRulesHTTPForbidsAreRefused(action: String, fragment: String) async throws {
        try await TestServer.run { server in
            let response = try await server.control(.post, "/faults", #"{"action": \#(action)}"#)
            #expect(response.errorCode == "invalid_value" && response.text.contains(fragment), "\(response.text)")
            #expect(try await server.control(.post, "/faults", #"{"action": {"type": "respond", "status": 204}}"#).status == .created)
        }
    }

    @Test(arguments: [
        (#"{"kind": "acess"}"#, "invalid_value"),
        (#"{"subjet": "alice"}"#, "unknown_field"),
        (#"{"subject": 7}"#, "invalid_value"),
    ])
    func badSelectorsAreRefused(body: String, code: String) async throws {
        try await TestServer.run { server in
            let response = try await server.control(.post, "/tokens/expire", body)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == code, "\(response.text)")
        }
    }

    @Test func tokenListingShowsStatesAndOnlyTruncatedValues() async throws {
        try await TestServer.run { server in
            let first = try await server.login()
            let second = try TokenPair(try await server.refresh(first.refresh!))
            let listing = try await server.control(.get, "/tokens")
            #expect(!listing.text.contains(first.access) && !listing.text.contains(first.refresh!) && !listing.text.contains(second.refresh!))
            let json = try listing.json()
            let refresh = try #require(json["refresh"] as? [[String: Any]])
            #expect(refresh.map { $0["state"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") } == ["live", "rotated"])
            #expect(refresh.allSatisfy { ($0["tokenTail"] as? String)?.count == 6 })
            server.mock.clock.advance(seconds: 300)
            let access = try #require(try await server.control(.get, "/tokens").json()["access"] as? [[String: Any]])
            #expect(access.count == 2 && access.allSatisfy { $0["state"] as? String == "expired" })
        }
    }

    @Test func resetForgetsEverything() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            _ = try await server.control(
                .post, "/faults", #"{"match": {"kind": "resource"}, "times": "unlimited", "action": {"type": "respond", "status": 500}}"#)
            _ = try await server.control(.post, "/clock/advance", #"{"seconds": 10}"#)
            #expect(try await server.control(.post, "/reset").status == .ok)
            #expect(try await server.control(.get, "/clock").json()["offsetSeconds"] as? Double == 0)
            #expect(try await server.control(.get, "/journal/count").json()["count"] as? Int == 0)
            #expect((try await server.control(.get, "/faults").json(array: true)).isEmpty)
            let me = try await server.get("/api/me", bearer: pair.access)
            #expect(me.status == .unauthorized && me.errorDescription == "Access token revoked", "tokens from before a reset are unknown")
            #expect(try await server.refresh(pair.refresh!).errorDescription == "Refresh token is not known")
        }
    }
}

extension TestResponse {
    func json(array: Bool) throws -> [Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [Any])
    }
}

struct ControlProtectionTests {
    static let adminOptions: ServerOptions = {
        var options = ServerOptions(signingKey: .random())
        options.adminToken = "admin-secret"
        return options
    }()

    @Test func adminTokenGuardsEveryControlRoute() async throws {
        try await TestServer.run(Self.adminOptions) { server in
            let pair = try await server.login()
            for path in ["", "/clock", "/journal", "/tokens", "/nope"] {
                let anonymous = try await server.control(.get, path)
                #expect(anonymous.status == .unauthorized, "GET /_authmock\(path)")
                #expect(anonymous.errorCode == "admin_token_required")
                // An OAuth access token is not the admin token.
                #expect(try await server.control(.get, path, headers: [.authorization: "Bearer \(pair.access)"]).status == .unauthorized)
            }
            let admin: HTTPFields = [.authorization: "Bearer admin-secret"]
            #expect(try await server.control(.get, "/clock", headers: admin).status == .ok)
            #expect(try await server.control(.post, "/clock/advance", #"{"seconds": 1}"#, headers: admin).status == .ok)
            // The admin token opens nothing but the control API.
            #expect(try await server.get("/api/me", bearer: "admin-secret").status == .unauthorized)
        }
    }

    /// Any method on a control path answers in the control API's shape, never the dialect's 404.
    @Test func otherMethodsOnControlPathsAnswerInTheControlShape() async throws {
        try await TestServer.run { server in
            for (method, path) in [
                (HTTPRequest.Method.post, "/clock"), (.get, "/clock/advance"), (.options, "/journal"), (.trace, ""), (.put, "/faults"),
            ] {
                let response = try await server.control(method, path)
                #expect(response.status == .methodNotAllowed, "\(method) \(path): \(response.text)")
                #expect(response.errorCode == "method_not_allowed")
                #expect(response.headers[.allow]?.isEmpty == false)
            }
            for method in [HTTPRequest.Method.options, .trace, .head] {
                #expect(try await server.control(method, "/nope").status == .notFound, "\(method)")
            }
            let head = try await server.control(.head, "/clock")
            #expect(head.status == .ok)
        }
        try await TestServer.run(Self.adminOptions) { server in
            for method in [HTTPRequest.Method.options, .trace, .head, .delete] {
                let response = try await server.control(method, "/clock")
                #expect(response.status == .unauthorized, "\(method)")
            }
        }
    }

    @Test func nonLoopbackWithoutAdminTokenRefusesToStart() async throws {
        await #expect(throws: SettingsError.self) {
            _ = try await Authmock(options: ServerOptions(host: "0.0.0.0", signingKey: .random()))
        }
        var options = ServerOptions(host: "0.0.0.0", signingKey: .random())
        options.adminToken = "set"
        _ = try await Authmock(options: options)
    }

    /// A web page the developer has open elsewhere can send a form or a
    /// `text/plain` fetch to the mock without a preflight: each is refused
    /// before it changes anything, and the mock's own tools still work.
    @Test func crossSiteRequestsCannotSteerTheMock() async throws {
        try await TestServer.run { server in
            let evil: HTTPFields = [.origin: "https://evil.example"]
            for (path, body) in [
                ("/clock/advance", #"{"seconds": 3600}"#), ("/reset", nil), ("/tokens/revoke", "{}"),
                ("/faults", #"{"action": {"type": "status", "status": 500}}"#),
            ] {
                let response = try await server.control(.post, path, body, headers: evil)
                #expect(response.status == .forbidden && response.errorCode == "cross_origin", "\(path): \(response.text)")
            }
            // The same bodies as a simple request without an Origin (an old browser's form).
            let plain = try await server.send(.post, "/_authmock/clock/advance", headers: [.contentType: "text/plain"], body: #"{"seconds": 3600}"#)
            #expect(plain.status.code == 415 && plain.errorCode == "unsupported_media_type", "\(plain.text)")
            let form = try await server.send(.post, "/_authmock/faults", headers: [.contentType: "application/x-www-form-urlencoded"], body: "a=b")
            #expect(form.status.code == 415)
            let clock = try await server.control(.get, "/clock").json()
            #expect(clock["offsetSeconds"] as? Double == 0, "nothing moved the clock")
            #expect(try await server.control(.get, "/faults").text == "[]", "no fault was added")
            // JSON with a charset, and a bodiless POST without a type, still work
            // (the server's own origin: ServeBinaryTests, where there is a Host).
            let charset = try await server.send(
                .post, "/_authmock/clock/advance", headers: [.contentType: "application/json; charset=utf-8"], body: #"{"seconds": 1}"#)
            #expect(charset.status == .ok)
            #expect(try await server.send(.post, "/_authmock/reset", headers: [:], body: nil).status == .ok)
        }
        // An origin configured for CORS may call it.
        var options = ServerOptions(signingKey: .random())
        options.corsOrigin = "http://app.test:3000"
        try await TestServer.run(options) { server in
            let allowed = try await server.control(.post, "/reset", nil, headers: [.origin: "http://app.test:3000"])
            #expect(allowed.status == .ok)
            let other = try await server.control(.post, "/reset", nil, headers: [.origin: "http://app.test:3001"])
            #expect(other.status == .forbidden)
        }
    }

    /// Every documented control error has a request that produces it.
    @Test func everyControlErrorIsReachable() async throws {
        let produced: [(ControlError, String, HTTPRequest.Method, String?)] = [
            (.invalidJSON, "/clock/advance", .post, "nope"),
            (.unknownField, "/clock/set", .post, #"{"offset": 1}"#),
            (.missingField, "/clock/set", .post, "{}"),
            (.invalidValue, "/clock/set", .post, #"{"offsetSeconds": "x"}"#),
            (.notFound, "/clocks", .get, nil),
            (.methodNotAllowed, "/clock", .delete, nil),
            // The test server is started without a judge.
            (.notJudging, "/verdicts", .get, nil),
        ]
        // The default server signs with HS256, whose key does not rotate.
        let rotation: (ControlError, String, HTTPRequest.Method, String?) = (.notRotatable, "/keys/rotate", .post, nil)
        try await TestServer.run { server in
            for (error, path, method, body) in produced + [rotation] {
                let response = try await server.control(method, path, body)
                #expect(response.status.code == error.row.status && response.errorCode == error.row.code, "\(path): \(response.text)")
            }
        }
        // storeUnavailable needs a failing database: EndToEndTests' StateStoreTests locks one;
        // crossOrigin and notJSON: crossSiteRequestsCannotSteerTheMock; foreignHost, which needs a
        // Host header on the wire: ServeBinaryTests.controlAPIRefusesAForeignHostNameWithoutAnAdminToken.
        let covered = Set((produced + [rotation]).map(\.0)).union([.adminTokenRequired, .storeUnavailable, .crossOrigin, .notJSON, .foreignHost])
        #expect(covered == Set(ControlError.allCases))
    }
}
