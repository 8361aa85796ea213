import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import TestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The real `authmock` binary, over real sockets.
@Suite(.serialized) struct ServeBinaryTests {
    @Test func passwordGrantMeRefreshAndReuseKillsTheFamily() async throws {
        let server = try ServingBinary()
        #expect(server.banner.contains("curl -s -u demo:demo-secret -d grant_type=password"))
        #expect(server.banner.contains(server.baseURL))
        try await server.withClient { client in
            let login = try await client.form("/oauth/token", "grant_type=password&username=alice&password=wonderland")
            #expect(login.status == .ok)
            let first = try login.json()
            let access = try #require(first["access_token"] as? String)
            let refresh = try #require(first["refresh_token"] as? String)

            let me = try await client.get("/api/me", headers: [.authorization: "Bearer \(access)"])
            #expect(me.status == .ok)
            #expect(try me.json()["sub"] as? String == "alice")

            let refreshed = try await client.form("/oauth/token", "grant_type=refresh_token&refresh_token=\(refresh)")
            #expect(refreshed.status == .ok)
            let second = try refreshed.json()
            let newAccess = try #require(second["access_token"] as? String)
            let newRefresh = try #require(second["refresh_token"] as? String)
            #expect(newRefresh != refresh)

            // Presenting the rotated token again is reuse: refused, and the family dies.
            let reuse = try await client.form("/oauth/token", "grant_type=refresh_token&refresh_token=\(refresh)")
            #expect(reuse.status == .badRequest)
            #expect(try reuse.json()["error"] as? String == "invalid_grant")
            let afterReuse = try await client.get("/api/me", headers: [.authorization: "Bearer \(newAccess)"])
            #expect(afterReuse.status == .unauthorized)
            #expect(afterReuse.headers[.wwwAuthenticate]?.contains(#"error="invalid_token""#) == true)
            let newRefreshUse = try await client.form("/oauth/token", "grant_type=refresh_token&refresh_token=\(newRefresh)")
            #expect(try newRefreshUse.json()["error"] as? String == "invalid_grant")
        }
        let exit = server.interrupt()
        #expect(exit.status == 0, "graceful shutdown on SIGINT: \(exit.stderr)")
        #expect(exit.stderr.contains("POST /oauth/token -> 200"), "one log line per request")
        #expect(!exit.stderr.contains("wonderland") && !exit.stderr.contains("demo-secret"), "secrets in the log")
    }

    /// A page on the mock's own origin may steer it; another origin may not.
    /// (URLSession sends `Host` with the port, as a browser does.)
    @Test func controlAPITakesItsOwnOriginOnly() async throws {
        let server = try ServingBinary()
        func post(_ path: String, origin: String, body: String?) async throws -> (Int, String) {
            var request = URLRequest(url: URL(string: server.baseURL + "/_authmock" + path)!)
            request.httpMethod = "POST"
            request.setValue(origin, forHTTPHeaderField: "Origin")
            if let body {
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(body.utf8)
            }
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }
        let own = try await post("/clock/advance", origin: server.baseURL, body: #"{"seconds": 5}"#)
        #expect(own.0 == 200, "\(own.1)")
        let other = try await post("/reset", origin: "http://127.0.0.1:1", body: nil)
        #expect(other.0 == 403 && other.1.contains("cross_origin"), "\(other.1)")
        _ = server.interrupt()
    }

    /// DNS rebinding: a page on evil.example whose name resolves to 127.0.0.1
    /// sends the same `Origin` and `Host`. Without an admin token the
    /// control API answers only this machine's names; with one, any name.
    @Test func controlAPIRefusesAForeignHostNameWithoutAnAdminToken() async throws {
        func advance(_ server: ServingBinary, host: String, admin: String? = nil) async throws -> String {
            let port = server.baseURL.split(separator: ":").last.map(String.init) ?? ""
            var arguments = [
                "-s", "-o", "/dev/stderr", "-w", "%{http_code}", "-X", "POST", "-H", "Host: \(host):\(port)", "-H", "Origin: http://\(host):\(port)",
                "-H", "Content-Type: application/json", "-d", #"{"seconds": 1}"#,
            ]
            if let admin { arguments += ["-H", "Authorization: Bearer \(admin)"] }
            let run = try await runProcess("curl", arguments + ["\(server.baseURL)/_authmock/clock/advance"])
            return run.stdout + " " + run.stderr
        }
        let open = try ServingBinary()
        #expect(try await advance(open, host: "evil.example").hasPrefix("403") == true)
        #expect(try await advance(open, host: "evil.example").contains("foreign_host"))
        for own in ["localhost", "127.0.0.1", "app.localhost"] { #expect(try await advance(open, host: own).hasPrefix("200"), "\(own)") }
        // The client-facing routes are not the control API: any name reaches them.
        let health = try await runProcess(
            "curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: evil.example", "\(open.baseURL)/health"])
        #expect(health.stdout == "200")
        _ = open.interrupt()
        let guarded = try ServingBinary(["--admin-token", "an-admin-token"])
        #expect(try await advance(guarded, host: "evil.example", admin: "an-admin-token").hasPrefix("200"))
        #expect(try await advance(guarded, host: "evil.example").hasPrefix("401"))
        _ = guarded.interrupt()
    }

    @Test func signingKeyFromTheEnvironmentIsNeverPrinted() async throws {
        let key = "an-environment-signing-key-of-32-bytes-or-more"
        let server = try ServingBinary(environment: ["AUTHMOCK_SIGNING_KEY": key])
        #expect(!server.banner.contains("random key"))
        let token = try await server.withClient { client in
            try await client.form("/oauth/token", "grant_type=password&username=alice&password=wonderland").json()["access_token"] as? String
        }
        #expect(token != nil)
        let exit = server.interrupt()
        #expect(!server.banner.contains(key) && !exit.stderr.contains(key))
        #expect(!exit.stderr.contains(token ?? "-"), "a token was logged in full")
    }

    @Test func configFileSetsUsersClientsAndLifetimes() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-\(UUID()).yaml")
        try """
        access_ttl: 1
        users:
          - username: bob
            password: builder
            claims: {name: Bob the Builder, email_verified: true, shoe_size: 44, groups: [builders, "7"]}
        clients:
          - client_id: app
            client_secret: app-secret
        """.write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let server = try ServingBinary(["--config", config.path])
        // Secrets from a config file are test data, but the banner lands in CI logs and screen shares.
        #expect(server.banner.contains("-u app:$CLIENT_SECRET"), "\(server.banner)")
        #expect(server.banner.contains("username=bob -d password=$PASSWORD"), "\(server.banner)")
        #expect(!server.banner.contains("app-secret") && !server.banner.contains("builder"), "\(server.banner)")
        try await server.withClient { client in
            let login = try await client.form("/oauth/token", "grant_type=password&username=bob&password=builder", basic: "app:app-secret")
            #expect(try login.json()["expires_in"] as? Int == 1)
            // users[].claims: what userinfo (and the id token) say about bob, JSON types kept.
            let openID = try await client.form(
                "/oauth/token", "grant_type=password&username=bob&password=builder&scope=openid", basic: "app:app-secret")
            let access = try #require(try openID.json()["access_token"] as? String)
            let info = try await client.get("/oauth/userinfo", headers: [.authorization: "Bearer \(access)"]).json()
            #expect(info["sub"] as? String == "bob" && info["name"] as? String == "Bob the Builder")
            #expect(info["email_verified"] as? Bool == true && info["shoe_size"] as? Int == 44)
            #expect(info["groups"] as? [String] == ["builders", "7"])
            let alice = try await client.form("/oauth/token", "grant_type=password&username=alice&password=wonderland", basic: "app:app-secret")
            #expect(alice.status == .badRequest)
        }
        #expect(server.interrupt().status == 0)
    }

    @Test func badSettingsExitWithAReason() async throws {
        let ttl = try await runAuthmock(["serve", "--port", "0", "--access-ttl", "0"])
        #expect(ttl.status != 0)
        #expect(ttl.stderr.contains("--access-ttl must be at least 1, got 0"), "\(ttl.stderr)")
        // A lifetime no date can hold is refused at start, not trapped on at the first sign-in.
        for flag in ["--refresh-ttl", "--access-ttl"] {
            let huge = try await runAuthmock(["serve", "--port", "0", flag, String(Int64.max)])
            #expect(huge.status != 0 && huge.stderr.contains("\(flag) must be at most 10000000000"), "\(huge.stderr)")
        }
        let dialect = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-huge-ttl-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: dialect) }
        let example = try await runAuthmock(["dialects", "--example"]).stdout
        try example.replacingOccurrences(of: "refresh_ttl: 2592000", with: "refresh_ttl: \(Int64.max)").write(
            to: dialect, atomically: true, encoding: .utf8)
        let checked = try await runAuthmock(["validate", dialect.path])
        #expect(checked.status == 2 && checked.stdout.contains("must be at most"), "\(checked.stdout)")
        let key = try await runAuthmock(["serve", "--port", "0", "--signing-key", "short"])
        #expect(key.status != 0)
        #expect(key.stderr.contains("at least 32 bytes"))
        let profile = try await runAuthmock(["serve", "--port", "0", "--profile", "nope"])
        #expect(profile.status == 2)
        // oauth2, then every file in dialects/ by name.
        #expect(
            profile.stderr.contains("--profile must be one of \((["oauth2"] + builtInDialectFiles).joined(separator: ", ")), got 'nope'"),
            "\(profile.stderr)")

        let config = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-\(UUID()).yaml")
        try "access_ttl: 60\nrefresh_tll: 5\n".write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let typo = try await runAuthmock(["serve", "--port", "0", "--config", config.path])
        #expect(typo.status != 0)
        #expect(typo.stderr.contains("\(config.path):2:1: unknown setting 'refresh_tll'"), "\(typo.stderr)")
    }

    @Test func errorsCommandPrintsTheDocsPage() async throws {
        let result = try await runAuthmock(["errors"])
        #expect(result.status == 0)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        #expect(result.stdout == (try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)))
    }

    @Test func helpExplainsEveryServeFlag() async throws {
        let help = try await runAuthmock(["serve", "--help"]).stdout
        for flag in [
            "--host", "--port", "--profile", "--access-ttl", "--refresh-ttl", "--config", "--signing-key", "--signing-key-file", "--reuse-grace",
            "--rotate-refresh", "--max-body", "--log-level",
        ] {
            #expect(help.contains(flag), "serve --help lacks \(flag)")
        }
    }
}

/// `authmock ctl` against the real server binary.
@Suite(.serialized) struct CtlBinaryTests {
    @Test func advancePastTheTTLThenTheJournalSaysExpired() async throws {
        let server = try ServingBinary()
        let environment = ["AUTHMOCK_URL": server.baseURL]
        let access = try await server.withClient { client in
            try await client.form("/oauth/token", "grant_type=password&username=alice&password=wonderland").json()["access_token"] as? String
        }
        let token = try #require(access)
        let advance = try await runAuthmock(["ctl", "advance", "301s"], environment: environment)
        #expect(advance.status == 0, "\(advance.stderr)")
        #expect(advance.stdout.contains(#""offsetSeconds" : 301"#), "\(advance.stdout)")

        let me = try await server.withClient { client in
            try await client.get("/api/me", headers: [.authorization: "Bearer \(token)"])
        }
        #expect(me.status == .unauthorized)
        #expect(me.headers[.wwwAuthenticate]?.contains(#"error="invalid_token""#) == true)

        let table = try await runAuthmock(["ctl", "journal", "--kind", "resource"], environment: environment)
        #expect(table.status == 0)
        #expect(table.stdout.contains("expired") && table.stdout.contains("invalid_token"), "\(table.stdout)")
        let json = try await runAuthmock(["ctl", "journal", "--kind", "resource", "--json"], environment: environment)
        let page = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let entry = try #require((page["entries"] as? [[String: Any]])?.first)
        #expect((entry["accessToken"] as? [String: Any])?["state"] as? String == "expired")
        #expect(entry["status"] as? Int == 401)

        let count = try await runAuthmock(["ctl", "journal", "count", "--kind", "token"], environment: environment)
        #expect(count.stdout.contains(#""count" : 1"#))
        let bad = try await runAuthmock(["ctl", "expire", "--kind", "acess"], environment: environment)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("must be one of access, refresh, all"), "\(bad.stderr)")
        #expect(server.interrupt().status == 0)
    }

    @Test func ctlNeedsTheAdminTokenWhenTheServerHasOne() async throws {
        let server = try ServingBinary(["--admin-token", "let-me-in"])
        let denied = try await runAuthmock(["ctl", "clock", "--url", server.baseURL])
        #expect(denied.status == 1)
        #expect(denied.stderr.contains("admin_token_required"))
        let allowed = try await runAuthmock(["ctl", "clock", "--url", server.baseURL], environment: ["AUTHMOCK_ADMIN_TOKEN": "let-me-in"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        _ = server.interrupt()
    }

    @Test func nonLoopbackServeWithoutAdminTokenRefusesToStart() async throws {
        let result = try await runAuthmock(["serve", "--host", "0.0.0.0", "--port", "0"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--admin-token"))
    }
}

struct JSONLogTests {
    @Test func jsonLogsAreOneObjectPerLine() async throws {
        let server = try ServingBinary(["--log-format", "json"])
        _ = try await server.withClient { client in try await client.get("/api/me") }
        let exit = server.interrupt()
        let lines = exit.stderr.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] != nil && object?["message"] != nil, "\(line)")
        }
        #expect(exit.stderr.contains("GET /api/me -> 401"))
    }
}

struct EnvironmentConfigurationTests {
    /// Containers configure by environment; the public URL keeps the issuer
    /// right behind port mapping and proxies.
    @Test func environmentMirrorsTheFlagsAndPublicURLSetsTheIssuer() async throws {
        let server = try ServingBinary(environment: ["AUTHMOCK_ACCESS_TTL": "7", "AUTHMOCK_PUBLIC_URL": "https://auth.example.test/"])
        try await server.withClient { client in
            let metadata = try await client.get("/.well-known/oauth-authorization-server").json()
            #expect(metadata["issuer"] as? String == "https://auth.example.test")
            #expect(metadata["token_endpoint"] as? String == "https://auth.example.test/oauth/token")
            let login = try await client.form("/oauth/token", "grant_type=password&username=alice&password=wonderland").json()
            #expect(login["expires_in"] as? Int == 7)
        }
        #expect(server.interrupt().status == 0)
        let bad = try await runAuthmock(["serve", "--port", "0"], environment: ["AUTHMOCK_ACCESS_TTL": "soon"])
        #expect(bad.status != 0 && bad.stderr.contains("AUTHMOCK_ACCESS_TTL must be a whole number"))
    }
}

/// HTTPS with a generated certificate, checked by a real client (curl) that
/// trusts exactly that certificate.
struct TLSTests {
    func curl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let run = try await runProcess("curl", ["-sS"] + arguments, mergeOutput: true)
        return (run.status, run.stdout)
    }

    @Test func generatedCertificateServesHTTPSToAClientThatTrustsIt() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-tls-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ServingBinary(["--tls", "--tls-dir", dir.path, "--tls-name", "10.0.2.2"])
        defer { _ = server.interrupt() }
        let certificate = dir.appendingPathComponent("authmock-localhost.crt").path
        #expect(server.banner.contains("listening on https://127.0.0.1:\(server.port)"))
        #expect(server.banner.contains(certificate), "the banner must print the certificate's path")
        for host in ["127.0.0.1", "localhost"] {
            let health = try await curl(["--cacert", certificate, "https://\(host):\(server.port)/health"])
            #expect(health.status == 0 && health.output.contains(#""status":"ok""#), "\(host): \(health.output)")
        }
        let login = try await curl([
            "--cacert", certificate, "-u", "demo:demo-secret", "-d", "grant_type=password", "-d", "username=alice", "-d", "password=wonderland",
            "https://localhost:\(server.port)/oauth/token",
        ])
        #expect(login.output.contains("access_token"), "\(login.output)")
        let metadata = try await curl(["--cacert", certificate, "https://127.0.0.1:\(server.port)/.well-known/oauth-authorization-server"])
        #expect(metadata.output.contains(#""issuer":"https://127.0.0.1:\#(server.port)""#), "\(metadata.output)")
        // Without trusting the certificate, verification fails: this is real TLS.
        #expect(try await curl(["https://127.0.0.1:\(server.port)/health"]).status != 0)
        // And plain HTTP is not served on the TLS port.
        #expect(!(try await curl(["http://127.0.0.1:\(server.port)/health"]).output.contains("ok")))
    }

    @Test func mismatchedTLSFlagsAreRefused() async throws {
        let result = try await runAuthmock(["serve", "--port", "0", "--tls", "--tls-cert", "/nonexistent.crt"])
        #expect(result.status != 0 && result.stderr.contains("--tls-cert and --tls-key go together"), "\(result.stderr)")
        let missing = try await runAuthmock(["serve", "--port", "0", "--tls", "--tls-cert", "/nonexistent.crt", "--tls-key", "/nonexistent.key"])
        #expect(missing.status != 0 && missing.stderr.contains("cannot read the certificate file"), "\(missing.stderr)")
    }
}

extension JSONLogTests {
    @Test func logFormatFromTheEnvironment() async throws {
        let server = try ServingBinary(environment: ["AUTHMOCK_LOG_FORMAT": "json", "AUTHMOCK_LOG_LEVEL": "info"])
        _ = try await server.withClient { client in try await client.get("/health") }
        let exit = server.interrupt()
        let first = try #require(exit.stderr.split(separator: "\n").first)
        #expect((try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])?["level"] as? String == "info", "\(exit.stderr)")
    }
}

/// Every server setting is declared once (ServerSetting.swift); the CLI's
/// help, the flag parser and the docs' tables all come from that table.
struct SettingsTableTests {
    @Test func serveHelpListsEverySettingWithItsEnvironmentVariable() async throws {
        let help = try await runAuthmock(["serve", "--help"])
        #expect(help.status == 0)
        let table = try await runAuthmock(["settings"]).stdout
        let flags = table.matches(of: /\| `(--[a-z0-9-]+)` \| `(AUTHMOCK_[A-Z0-9_]+)` \|/).map { (String($0.output.1), String($0.output.2)) }
        #expect(flags.count >= 17, "\(table)")
        for (flag, variable) in flags {
            #expect(help.stdout.contains(flag + " "), "serve --help does not list \(flag)")
            #expect(help.stdout.contains(variable), "serve --help does not name \(variable)")
        }
    }

    @Test func theDocsTablesAreTheGeneratedOne() async throws {
        var table = try await runAuthmock(["settings"]).stdout
        if table.hasSuffix("\n") { table.removeLast() }
        for page in ["README.md", "docs/configuration.md"] {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent(page), encoding: .utf8)
            #expect(text.contains("<!-- settings:begin -->\n" + table + "\n<!-- settings:end -->"), "\(page) is stale: run scripts/regen-docs.sh")
        }
    }

    @Test func settingFlagsAreParsedFromTheTableWithClearErrors() async throws {
        let unknown = try await runAuthmock(["serve", "--acces-ttl", "5"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown option '--acces-ttl' (did you mean '--access-ttl'?)"), "\(unknown.stderr)")
        let bad = try await runAuthmock(["serve", "--access-ttl=0"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--access-ttl must be at least 1, got 0"), "\(bad.stderr)")
        let badEnvironment = try await runAuthmock(["serve"], environment: ["AUTHMOCK_ROTATE_REFRESH": "maybe"])
        #expect(badEnvironment.status == 2)
        #expect(badEnvironment.stderr.contains("AUTHMOCK_ROTATE_REFRESH must be true or false"), "\(badEnvironment.stderr)")
    }

    @Test func flagsEnvironmentAndFileMeetInOneServer() throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-\(UUID()).yaml")
        try "access_ttl: 42\nrefresh_ttl: 777\nrotate_refresh: false\n".write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let server = try ServingBinary(["--config", config.path, "--access-ttl=60"], environment: ["AUTHMOCK_REFRESH_TTL": "900"])
        defer { _ = server.interrupt() }
        #expect(server.banner.contains("access tokens: HS256, 60 s"), "\(server.banner)")
        #expect(server.banner.contains("refresh tokens: 900 s, rotation off"), "\(server.banner)")
    }
}
