@testable import AuthmockDialect
import AuthmockCore
import AuthmockModel
@testable import AuthmockScenario
import AuthmockTransports
import AuthmockServer
import DriverProtocol
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// Dialect files (docs/dialects.md): the loader's every problem at its
/// place, and a declared dialect served as the page says.
struct DialectFileTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func docsPageCarriesTheGeneratedExampleAndReference() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/dialects.md"), encoding: .utf8)
        let example = "<!-- example:begin -->\n```yaml\n" + DialectFormat.example.trimmingCharacters(in: .newlines) + "\n```\n<!-- example:end -->"
        #expect(page.contains(example), "docs/dialects.md's example is stale: run scripts/regen-docs.sh")
        let reference =
            "<!-- reference:begin -->\n" + DialectFormat.referenceMarkdown().trimmingCharacters(in: .newlines) + "\n<!-- reference:end -->"
        #expect(page.contains(reference), "docs/dialects.md's reference is stale: run scripts/regen-docs.sh")
    }

    @Test func theExampleIsValidAndTravelsAsJSONUnchanged() throws {
        let dialect = try DialectLoader.parse(DialectFormat.example, file: "acme.yaml")
        let description = dialect.description
        #expect(description.name == "acme")
        #expect(description.signIn.username == "credentials.login")
        #expect(description.refresh.refreshToken == .header("X-Refresh-Token", scheme: nil))
        #expect(description.tokens.body.path(to: .accessToken) == ["session", "access"])
        #expect(dialect.settings["access_ttl"] == .integer(900))
        // The runner hands the description to drivers as JSON (driver-protocol.md).
        let data = try JSONEncoder().encode(description)
        #expect(try JSONDecoder().decode(DialectDescription.self, from: data) == description)
    }

    /// `refresh_on` says which signal a client refreshes on, where the
    /// answers alone would say otherwise: Acme's codes tell an expired token
    /// from a revoked one, so by default only the code means refresh and
    /// envelope's cases run; `status` makes any 401 the signal, as reissue's
    /// file says, and reissue's cases (6.2: a revoked token is refreshed) run.
    @Test func refreshOnSaysWhichSignalAndSoWhichCasesRun() throws {
        let cases = Dictionary(try builtInCases().map { ($0.0.id, $0.0) }, uniquingKeysWith: { first, _ in first })
        let revokedRefreshed = try #require(cases["6.2"]), otherCodeNotRefreshed = try #require(cases["5.6"])
        let byDefault = try DialectLoader.parse(DialectFormat.example, file: "acme.yaml").description
        #expect(byDefault.refreshOn == nil && byDefault.signalsExpiryByCode)
        #expect(!revokedRefreshed.applies(to: byDefault) && otherCodeNotRefreshed.applies(to: byDefault))
        let byStatus = try DialectLoader.parse(DialectFormat.example + "\nrefresh_on: status\n", file: "acme.yaml").description
        #expect(byStatus.refreshOn == .status && !byStatus.signalsExpiryByCode)
        #expect(revokedRefreshed.applies(to: byStatus) && !otherCodeNotRefreshed.applies(to: byStatus))
        #expect(DialectLoader.builtin("reissue")?.description.refreshOn == .status)
        #expect(DialectLoader.builtin("envelope")?.description.signalsExpiryByCode == true)
    }

    struct Broken: Sendable, CustomTestStringConvertible {
        let name: String
        let edit: @Sendable (String) -> String
        let line: Int
        let message: String
        var testDescription: String { name }
    }

    static let broken: [Broken] = [
        Broken(
            name: "a misspelt key", edit: { $0.replacingOccurrences(of: "sign_in:", with: "signin:") }, line: 4,
            message: "unknown key 'signin' in dialect (did you mean 'sign_in'?)"),
        Broken(
            name: "an unknown placeholder", edit: { $0.replacingOccurrences(of: "{access_token}", with: "{acess_token}") }, line: 16,
            message: "tokens.body.session.access: '{acess_token}' is not a placeholder here"),
        Broken(
            name: "an error placeholder in a success answer", edit: { $0.replacingOccurrences(of: "{user}", with: "{code}") }, line: 19,
            message: "'{code}' is not a placeholder here"),
        Broken(
            name: "a group left unanswered",
            edit: {
                $0.replacingOccurrences(of: "    refresh_refused: {status: 403, code: 1403, message: \"Session over: sign in again\"}\n", with: "")
            }, line: 25,
            message: "errors.answers: no answer for 'access_token_as_refresh_token'"),
        Broken(
            name: "an unknown situation", edit: { $0.replacingOccurrences(of: "insufficient_scope:", with: "insufficent_scope:") }, line: 34,
            message: "unknown key 'insufficent_scope' (did you mean 'insufficient_scope'?)"),
        Broken(
            name: "a built-in name", edit: { $0.replacingOccurrences(of: "dialect: acme", with: "dialect: envelope") }, line: 2,
            message: "'envelope' is a built-in dialect"),
        Broken(
            name: "one endpoint twice", edit: { $0.replacingOccurrences(of: "path: /v2/session/renew", with: "path: /v2/session") }, line: 10,
            message: "is the sign-in endpoint too"),
        Broken(
            name: "a path authmock serves", edit: { $0.replacingOccurrences(of: "path: /v2/session/renew", with: "path: /api/me") }, line: 10,
            message: "/api/me is served by authmock in every dialect"),
        Broken(
            name: "a merge of no mapping",
            edit: { $0.replacingOccurrences(of: "    insufficient_scope:", with: "    <<: 5\n    insufficient_scope:") }, line: 34,
            message: "unknown key '<<'"),
        Broken(
            name: "a token in two places",
            edit: { $0.replacingOccurrences(of: "{header: X-Refresh-Token}", with: "{header: X-Refresh-Token, cookie: rt}") }, line: 11,
            message: "give exactly one of field, header, cookie or query"),
        Broken(
            name: "a redirect as an error", edit: { $0.replacingOccurrences(of: "status: 400, code: 1000", with: "status: 302, code: 1000") },
            line: 25,
            message: "an error's status is 4xx or 5xx, or 2xx (not 204 or 205) with its code in the body, got 302"),
        Broken(
            name: "an error in a 2xx with no code in the body",
            edit: {
                $0.replacingOccurrences(of: "status: 400, code: 1000", with: "status: 200, code: 1000").replacingOccurrences(
                    of: "problem: {code: \"{code}\", text: \"{message}\"}", with: "problem: {text: \"{message}\"}")
            }, line: 25,
            message: "errors.body: an error answered with a 2xx status needs `{code}` in errors.body"),
        Broken(
            name: "an error in a 2xx with a success's code",
            edit: {
                $0.replacingOccurrences(of: "status: 400, code: 1000", with: "status: 200, code: 1000").replacingOccurrences(
                    of: "    ok: true\n", with: "    ok: true\n    problem: {code: 1000}\n")
            }, line: 26,
            message: "errors.answers.bad_request.code: 1000 is also what a success answer says at problem.code"),
        Broken(
            name: "a setting of the wrong type", edit: { $0.replacingOccurrences(of: "access_ttl: 900", with: "access_ttl: soon") }, line: 36,
            message: "settings.access_ttl: expected a whole number"),
        Broken(
            name: "no access token in the answer", edit: { $0.replacingOccurrences(of: "\"{access_token}\"", with: "x") }, line: 13,
            message: "the answer must say `{access_token}`"),
        Broken(
            name: "a resource envelope without the resource", edit: { $0 + "resources: {body: {ok: true}}\n" }, line: 38,
            message: "resources.body: must hold `{data}`"),
        Broken(name: "broken YAML", edit: { $0 + "  - [unclosed\n" }, line: 38, message: "invalid YAML"),
        Broken(
            name: "a copy of no access token",
            edit: {
                $0.replacingOccurrences(
                    of: "  refresh_token: {header: X-Refresh-Token}\n",
                    with: "  refresh_token: {header: X-Refresh-Token}\n  access_token_copy: {header: Authorization, scheme: Bearer}\n")
            },
            line: 12, message: "refresh.access_token_copy: a second place needs a first"),
        Broken(
            name: "an unknown unrotated answer",
            edit: {
                $0.replacingOccurrences(
                    of: "  refresh_token: {header: X-Refresh-Token}\n",
                    with: "  refresh_token: {header: X-Refresh-Token}\n  unrotated_refresh_token: kept\n")
            },
            line: 12, message: "'kept' is not one of left_out, repeated"),
        Broken(
            name: "a refresh answer without the access token",
            edit: {
                $0.replacingOccurrences(
                    of: "  refresh_token: {header: X-Refresh-Token}\n",
                    with: "  refresh_token: {header: X-Refresh-Token}\n  tokens: {body: {ok: true}}\n")
            }, line: 12,
            message: "refresh.tokens: the answer must say `{access_token}`"),
        Broken(
            name: "another encoding that is the endpoint's own",
            edit: {
                $0.replacingOccurrences(of: "  path: /v2/session/renew\n", with: "  path: /v2/session/renew\n  also_accepts: json\n")
            }, line: 11,
            message: "refresh.also_accepts: json is already the endpoint's encoding"),
        Broken(
            name: "a refresh token pattern that is no regular expression",
            edit: {
                $0.replacingOccurrences(
                    of: "  refresh_token: {header: X-Refresh-Token}\n",
                    with: "  refresh_token: {header: X-Refresh-Token}\n  refresh_token_pattern: \"[a-z\"\n")
            }, line: 12,
            message: "refresh.refresh_token_pattern: not a regular expression"),
        Broken(
            name: "a refresh token pattern that refuses authmock's own tokens",
            edit: {
                $0.replacingOccurrences(
                    of: "  refresh_token: {header: X-Refresh-Token}\n",
                    with: "  refresh_token: {header: X-Refresh-Token}\n  refresh_token_pattern: \"[a-z0-9]{12}\"\n")
            }, line: 12,
            message: "refresh.refresh_token_pattern: must take the refresh tokens authmock issues (60 base64url characters"),
        Broken(
            name: "a path segment that is a route parameter",
            edit: { $0.replacingOccurrences(of: "path: /v2/session/renew", with: "path: /v2/:session") }, line: 10,
            message: "must be a plain path starting with /"),
    ]

    /// The built-in dialects written as files (dialects/) are what the server
    /// serves: the binary carries each file as written and as this loader
    /// compiles it today, and `--dialect NAME` serves that compiled form.
    @Test func builtInDialectFilesAreTheOnesServed() throws {
        let directory = Self.root.appendingPathComponent("dialects")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".yaml") }.map {
            String($0.dropLast(5))
        }.sorted()
        #expect(names == BuiltinDialects.names, "dialects/ and the binary differ: run scripts/regen-docs.sh")
        for name in names {
            let text = try String(contentsOf: directory.appendingPathComponent("\(name).yaml"), encoding: .utf8)
            #expect(BuiltinDialects.file(name) == text, "dialects/\(name).yaml changed: run scripts/regen-docs.sh")
            let loaded = try DialectLoader.parse(text, file: "dialects/\(name).yaml", builtin: true)
            #expect(
                BuiltinDialects.description(name) == loaded.description, "dialects/\(name).yaml compiles differently now: run scripts/regen-docs.sh")
            // The five the driver protocol names keep the server's defaults; a vendor's file says its backend's.
            if BuiltinSuite.caseDialects.contains(name) {
                #expect(loaded.settings.values.isEmpty, "a built-in dialect's settings are the server's defaults")
            }
            #expect(Dialects.names.contains(name), "dialects/\(name).yaml is a profile without Swift")
            #expect(
                BuiltinDialects.settings(name) == loaded.settings.values.mapValues(\.text),
                "dialects/\(name).yaml's settings changed: run scripts/regen-docs.sh")
            #expect(Dialects.make(name, options: DialectOptions()) is DeclaredDialect)
        }
        let schema = try String(contentsOf: Self.root.appendingPathComponent("docs/dialect.schema.json"), encoding: .utf8)
        #expect(
            schema.trimmingCharacters(in: .newlines) == DialectFormat.jsonSchema().trimmingCharacters(in: .newlines),
            "docs/dialect.schema.json is stale: run scripts/regen-docs.sh")
    }

    /// YAML merge keys (`<<: *base`) share an answer's fields, as in
    /// dialects/simplejwt.yaml: the answer's own keys win, and a list of
    /// merged mappings is read in order. An answer's own `body` replaces
    /// `errors.body`, and an empty `detail` says nothing after the message.
    /// Under `authmock run` a dialect's lifetimes and rotation are the
    /// case's, but a trait of the backend (Passport's refresh revoking the
    /// access token it replaces) holds on its case servers; a case's own
    /// `server:` still wins, as it does over any default.
    @Test func aBackendTraitFollowsTheDialectIntoCaseServers() throws {
        var options = RunOptions(driver: "unused")
        for name in ["passport", "keycloak"] { options.dialects[name] = DialectLoader.builtin(name) }
        let passport = ScenarioRunner.caseServerOptions(profile: "passport", options: options)
        #expect(passport.tokens.refreshRevokesAccess)
        #expect(passport.tokens.accessTTL == Scenario.caseAccessSeconds, "the file's year-long lifetime is not a case's")
        #expect(!ScenarioRunner.caseServerOptions(profile: "keycloak", options: options).tokens.refreshRevokesAccess)
        #expect(ServerSetting.all.filter(\.backendTrait).map(\.key) == ["refresh_revokes_access", "signing_alg", "unknown_user"])
    }

    @Test func mergeKeysAndAnAnswersOwnBody() async throws {
        let text = DialectFormat.example.replacingOccurrences(
            of: "    insufficient_scope:",
            with: """
                    access_token_missing:
                      <<: [{status: 401, code: 9, message: first, detail: ""}, {status: 500, code: 10, message: second, when: merged}]
                      message: own
                      body: {why: "{message}", n: "{code}"}
                    insufficient_scope:
                """)
        let loaded = try DialectLoader.parse(text, file: "acme.yaml")
        let answer = try #require(loaded.description.errors.answers["access_token_missing"])
        #expect(answer.status == 401 && answer.code == .integer(9) && answer.message == "own" && answer.when == "merged" && answer.detail == "")
        var options = ServerOptions(signingKey: try SigningKey(secret: String(repeating: "s", count: 32)))
        loaded.apply(to: &options)
        let app = try AuthmockApplication.make(mock: try await Authmock(options: options), logger: Logger(label: "authmock-test"))
        try await app.test(.router) { client in
            let response = try await client.execute(uri: "/api/me", method: .get)
            #expect(response.status.code == 401)
            #expect(String(buffer: response.body) == #"{"n":9,"why":"own"}"#)
        }
    }

    @Test(arguments: broken)
    func everyProblemIsReportedAtItsPlace(_ broken: Broken) throws {
        let text = broken.edit(DialectFormat.example)
        #expect(text != DialectFormat.example, "the edit changed nothing")
        let problems = DialectLoader.problems(text, file: "acme.yaml")
        let match = problems.first { $0.message.contains(broken.message) }
        #expect(match != nil, "no problem says '\(broken.message)'; got: \(problems.map(\.description))")
        #expect(match?.line == broken.line, "\(match?.description ?? "-") is not at line \(broken.line)")
        #expect(match?.file == "acme.yaml")
    }

    /// Problems of the `jwt:` and `documents:` sections, each at its line: a
    /// path that is no path or is served already, a claim authmock sets
    /// itself, a placeholder the section has none of.
    @Test(arguments: [
        ("jwt", "  issuer_path: pool", "jwt.issuer_path: 'pool' must start with '/'"),
        ("jwt", "  access_claims: {aud: mine}", "jwt.access_claims.aud: authmock sets this claim itself"),
        ("jwt", "  id_token_claims: {nonce: n}", "jwt.id_token_claims.nonce: authmock sets this claim itself"),
        ("jwt", "  access_claims: {who: \"{username}\"}", "'{username}' is not a placeholder here; expected {user} or {client_id}"),
        ("jwt", "  access_left_out: [exp]", "jwt.access_left_out[0]: 'exp' is not one of aud, nbf"),
        ("documents", "  well-known: {a: 1}", "documents: 'well-known' must be a plain path starting with '/'"),
        ("documents", "  /v2/session: {a: 1}", "documents: '/v2/session' is served already"),
        ("documents", "  /health: {a: 1}", "documents: '/health' is served already"),
        ("documents", "  /meta: {a: \"{access_token}\"}", "'{access_token}' is not a placeholder here"),
    ])
    func sectionProblemsAreReportedAtTheirPlace(section: String, line: String, message: String) throws {
        let text = DialectFormat.example + "\(section):\n" + line + "\n"
        let problems = DialectLoader.problems(text, file: "acme.yaml")
        let match = problems.first { $0.message.contains(message) }
        #expect(match != nil, "no problem says '\(message)'; got: \(problems.map(\.description))")
        #expect(match?.line == text.split(separator: "\n", omittingEmptySubsequences: false).count - 1)
    }

    /// A declared dialect's `jwt:` shapes the tokens it serves: the issuer
    /// path with the JWKS under it, no `aud` or `nbf` and added claims on the access
    /// token (which resources still accept), and an id token at sign-in.
    @Test func aDialectsJWTShapeIsServed() async throws {
        let text =
            DialectFormat.example.replacingOccurrences(of: "user: \"{user}\"", with: "user: \"{user}\"\n      id: \"{id_token}\"")
            + "jwt:\n  issuer_path: /pool-1\n  access_left_out: [aud, nbf]\n  access_claims: {token_use: access, username: \"{user}\"}\n"
            + "  id_token_claims: {token_use: id, who: \"{user} at {client_id}\"}\n"
        let loaded = try DialectLoader.parse(text, file: "acme.yaml")
        var options = ServerOptions(signingKey: try SigningKey(secret: String(repeating: "s", count: 32)))
        loaded.apply(to: &options)
        options.tokens.signingAlgorithm = .rs256
        let mock = try await Authmock(options: options)
        let app = try AuthmockApplication.make(mock: mock, logger: Logger(label: "authmock-test"))
        try await app.test(.router) { client in
            let response = try await client.execute(
                uri: "/v2/session", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"credentials": {"login": "alice", "secret": "wonderland"}}"#))
            let session = try #require(
                (try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])?["session"] as? [String: Any])
            let access = try Self.claims(try #require(session["access"] as? String))
            let id = try Self.claims(try #require(session["id"] as? String, "the id token is issued"))
            #expect(
                access["aud"] == nil && access["nbf"] == nil && access["token_use"] as? String == "access" && access["username"] as? String == "alice"
            )
            #expect((access["iss"] as? String)?.hasSuffix("/pool-1") == true && id["iss"] as? String == access["iss"] as? String)
            #expect(id["aud"] as? String == "demo" && id["token_use"] as? String == "id" && id["who"] as? String == "alice at demo")
            #expect(id["at_hash"] == nil && id["jti"] is String)
            let me = try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(session["access"] as? String ?? "")"])
            #expect(me.status == .ok, "an access token without aud is this dialect's own")
            let jwks = try await client.execute(uri: "/pool-1/.well-known/jwks.json", method: .get)
            let keys = (try JSONSerialization.jsonObject(with: Data(buffer: jwks.body)) as? [String: Any])?["keys"] as? [[String: Any]]
            #expect(jwks.status == .ok && keys?.first?["alg"] as? String == "RS256")
        }
    }

    /// A JWT's claims, unverified.
    static func claims(_ jwt: String) throws -> [String: Any] {
        let part = String(jwt.split(separator: ".")[1])
        let padded =
            part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            + String(repeating: "=", count: (4 - part.count % 4) % 4)
        let data = try #require(Data(base64Encoded: padded))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The session docs/dialects.md walks through, against the served example.
    @Test func theExampleServesTheSessionTheDocsShow() async throws {
        try await withDialectServed(try DialectLoader.parse(DialectFormat.example, file: "acme.yaml")) { mock, client in
            func send(
                _ method: HTTPRequest.Method, _ path: String, _ headers: HTTPFields = [:], _ body: String? = nil
            ) async throws -> (Int, HTTPFields, [String: Any]) {
                let response = try await client.execute(uri: path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
                let json = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any] ?? [:]
                return (Int(response.status.code), response.headers, json)
            }
            func problem(_ json: [String: Any]) -> (code: Int?, text: String?) {
                let problem = json["problem"] as? [String: Any]
                return (problem?["code"] as? Int, problem?["text"] as? String)
            }
            let json: HTTPFields = [.contentType: "application/json"]
            let (status, _, signedIn) = try await send(.post, "/v2/session", json, #"{"credentials": {"login": "alice", "secret": "wonderland"}}"#)
            #expect(status == 200)
            let session = try #require(signedIn["session"] as? [String: Any])
            #expect(session["ttl"] as? String == "900")
            #expect(session["user"] as? String == "alice")
            let access = try #require(session["access"] as? String)
            let refresh = try #require(session["refresh"] as? String)
            #expect(try await send(.get, "/api/me", [.authorization: "Bearer \(access)"]).0 == 200)

            // A wrong secret, a missing field and a wrong method, each in the file's shape.
            let (wrongStatus, _, wrong) = try await send(.post, "/v2/session", json, #"{"credentials": {"login": "alice", "secret": "x"}}"#)
            #expect(wrongStatus == 401 && problem(wrong).code == 1001)
            let (missingStatus, _, missing) = try await send(.post, "/v2/session", json, #"{"credentials": {"login": "alice"}}"#)
            #expect(missingStatus == 400 && problem(missing).text == "Bad request: credentials.secret")
            #expect(try await send(.get, "/v2/session").0 == 404)

            // The token runs out on the server clock: the file's 401 with its challenge.
            mock.clock.advance(seconds: 901)
            let (expiredStatus, expiredHeaders, expired) = try await send(.get, "/api/me", [.authorization: "Bearer \(access)"])
            #expect(expiredStatus == 401 && problem(expired).code == 1402)
            #expect(expiredHeaders[.wwwAuthenticate] == #"Bearer error="invalid_token""#)

            // The refresh token in its header: a new pair, in the sign-in's shape.
            let renewHeader = HTTPField.Name("X-Refresh-Token")!
            let (renewedStatus, _, renewed) = try await send(.post, "/v2/session/renew", [renewHeader: refresh])
            #expect(renewedStatus == 200)
            let renewedSession = try #require(renewed["session"] as? [String: Any])
            let newRefresh = try #require(renewedSession["refresh"] as? String)
            #expect(newRefresh != refresh)
            #expect(try await send(.get, "/api/me", [.authorization: "Bearer \(try #require(renewedSession["access"] as? String))"]).0 == 200)

            // The old refresh token again is reuse: the login ends, in the file's 403.
            let (reusedStatus, _, reused) = try await send(.post, "/v2/session/renew", [renewHeader: refresh])
            #expect(reusedStatus == 403 && problem(reused).code == 1403)
            #expect(try await send(.post, "/v2/session/renew", [renewHeader: newRefresh]).0 == 403)
            let (noTokenStatus, _, noToken) = try await send(.post, "/v2/session/renew")
            #expect(noTokenStatus == 400 && problem(noToken).text == "Bad request: the X-Refresh-Token header")
            // The journal knows the dialect's requests by kind, and the refresh token each presented.
            let kinds = try await mock.journal.entries(JournalFilter()).entries.map(\.kind)
            #expect(kinds.filter { $0 == .login }.count == 3)
            #expect(kinds.filter { $0 == .refresh }.count == 4)
        }
    }
}

/// A fault rule's `answer` action: one rule ("this token expired") answered
/// in each dialect's own words, so a case about the signal runs on every
/// dialect, code-signalled ones too; the journal notes the situation, and a
/// name no dialect answers is refused with a "did you mean".
struct AnswerActionTests {
    @Test(arguments: [("envelope", 401, "40101"), ("result-code", 200, "1001"), ("supabase", 401, "PGRST303")])
    func aRuleAnswersAsTheDialectDoes(dialect: String, status: Int, code: String) async throws {
        let loaded = try #require(DialectLoader.builtin(dialect))
        try await withDialectServed(loaded) { mock, client in
            let issued = try await mock.authority.issue(subject: "alice", clientID: "demo", scope: "read")
            let rule = try FaultRule(StrictObject(["action": ["type": "answer", "situation": "access_token_expired"]])).checkedSituation()
            _ = mock.control.addFault(rule)
            let response = try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Bearer \(issued.accessToken)"])
            #expect(Int(response.status.code) == status, "\(dialect): \(response.status)")
            #expect(String(buffer: response.body).contains(code), "\(dialect): \(String(buffer: response.body))")
            let entry = try #require(try await mock.control.journal().entries.last)
            #expect(entry.situation == "access_token_expired" && entry.fault != nil, "\(entry)")
        }
    }

    @Test func aSituationNoDialectAnswersIsRefused() throws {
        let rule = try FaultRule(StrictObject(["action": ["type": "answer", "situation": "acess_token_expired"]]))
        #expect(throws: ControlInputError.self) { try rule.checkedSituation() }
        do {
            _ = try rule.checkedSituation()
        } catch {
            #expect(error.message.contains("did you mean 'access_token_expired'"), "\(error.message)")
        }
        let yaml = "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - fault: {action: {type: answer, situation: nope}}\nexpect:\n  refreshes: 1\n"
        let problems = ScenarioLoader.problems(yaml, file: "answer.yaml")
        let first = problems.first
        #expect(first?.description.hasPrefix("answer.yaml:5:") == true && first?.message.contains("situation") == true, "\(problems)")
    }
}
