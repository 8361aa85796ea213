import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// `--state`: token state that survives a restart (SQLite) and that several
/// replicas share (PostgreSQL), through the real binary.
@Suite(.serialized) struct StateStoreTests {
    /// One issuer for every run and replica, as behind a load balancer: a
    /// token's `iss` must not depend on which process signed it.
    static let issuer = "http://authmock.test"

    static func temporaryDatabase() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("authmock-test-\(UUID().uuidString).db").path
    }

    static func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    @Test func aRestartedServerKeepsItsClientsSignedIn() async throws {
        let path = Self.temporaryDatabase()
        defer { Self.removeDatabase(path) }
        let arguments = ["--state", "sqlite:" + path, "--public-url", Self.issuer]
        let first = try ServingBinary(arguments)
        #expect(first.banner.contains("token state: sqlite:\(path)"))
        let (access, refresh) = try await first.withClient { client in
            let login = try await client.form("/oauth/token", "grant_type=password&username=alice&password=wonderland")
            let json = try login.json()
            // The clock moved by a test is part of the state too.
            let moved = try await client.post(
                "/_authmock/clock/advance", headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"seconds": 120}"#))
            #expect(moved.status == .ok)
            return (try #require(json["access_token"] as? String), try #require(json["refresh_token"] as? String))
        }
        #expect(first.interrupt().status == 0)

        // A new process on the same file: no sign-in, no configured key.
        let second = try ServingBinary(arguments)
        try await second.withClient { client in
            let clock =
                try JSONSerialization.jsonObject(with: Data(buffer: try await client.get("/_authmock/clock").body ?? ByteBuffer())) as? [String: Any]
            #expect(clock?["offsetSeconds"] as? Double == 120)
            let me = try await client.get("/api/me", headers: [.authorization: "Bearer \(access)"])
            #expect(me.status == .ok, "the access token of the first run still works")
            let refreshed = try await client.form("/oauth/token", "grant_type=refresh_token&refresh_token=\(refresh)")
            #expect(refreshed.status == .ok, "the refresh token of the first run still works")
            let newAccess = try #require(try refreshed.json()["access_token"] as? String)
            // The rotation happened in this run; reuse detection sees it.
            let reuse = try await client.form("/oauth/token", "grant_type=refresh_token&refresh_token=\(refresh)")
            #expect(reuse.status == .badRequest)
            #expect(try reuse.json()["error_description"] as? String == "Refresh token already used; its whole family is now revoked")
            let afterReuse = try await client.get("/api/me", headers: [.authorization: "Bearer \(newAccess)"])
            #expect(afterReuse.status == .unauthorized, "reuse revoked the whole login")
        }
        #expect(second.interrupt().status == 0)
    }

    /// RS256/ES256 key pairs are state too: a restarted server keeps
    /// signing and verifying with them, retired keys keep their grace, and
    /// the JWKS a client cached stays right.
    @Test(arguments: ["RS256", "ES256"]) func aRestartedServerKeepsItsKeyPairs(algorithm: String) async throws {
        let path = Self.temporaryDatabase()
        defer { Self.removeDatabase(path) }
        let arguments = ["--state", "sqlite:" + path, "--public-url", Self.issuer, "--signing-alg", algorithm]
        let signIn = "grant_type=password&username=alice&password=wonderland&scope=openid%20read"
        let first = try ServingBinary(arguments)
        let (access, retiredKid, currentKid) = try await first.withClient { client in
            let access = try #require(try await client.form("/oauth/token", signIn).json()["access_token"] as? String)
            let retired = try Self.kids(try await client.get("/oauth/jwks").json())
            let rotated = try await client.post(
                "/_authmock/keys/rotate", headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"graceSeconds": 600}"#))
            #expect(rotated.status == .ok)
            let current = try Self.kids(try await client.get("/oauth/jwks").json())
            #expect(current.count == 2 && current.last == retired.first)
            return (access, try #require(retired.first), try #require(current.first))
        }
        #expect(first.interrupt().status == 0)

        let second = try ServingBinary(arguments)
        #expect(second.banner.contains("kid \(currentKid)"), "\(second.banner)")
        try await second.withClient { client in
            #expect(try Self.kids(try await client.get("/oauth/jwks").json()) == [currentKid, retiredKid])
            let me = try await client.get("/api/me", headers: [.authorization: "Bearer \(access)"])
            #expect(me.status == .ok, "a token signed by the retired key still verifies in its grace")
            let fresh = try #require(try await client.form("/oauth/token", signIn).json()["id_token"] as? String)
            #expect(try Self.header(fresh)["kid"] as? String == currentKid)
            // The grace runs on the kept clock: past it, the retired key is gone.
            _ = try await client.post(
                "/_authmock/clock/advance", headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"seconds": 601}"#))
            #expect(try Self.kids(try await client.get("/oauth/jwks").json()) == [currentKid])
            let late = try await client.get("/api/me", headers: [.authorization: "Bearer \(access)"])
            #expect(late.status == .unauthorized)
        }
        #expect(second.interrupt().status == 0)
    }

    static func kids(_ jwks: [String: Any]) throws -> [String] {
        try #require(jwks["keys"] as? [[String: Any]]).compactMap { $0["kid"] as? String }
    }

    static func header(_ jwt: String) throws -> [String: Any] {
        var part = String(jwt.split(separator: ".")[0]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while part.count % 4 != 0 { part += "=" }
        let data = try #require(Data(base64Encoded: part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A database that cannot be written answers 503 in each dialect's
    /// shape, and on the control API; never a verdict about the token.
    @Test func aLockedDatabaseAnswers503() async throws {
        let path = Self.temporaryDatabase()
        defer { Self.removeDatabase(path) }
        let oauth2 = try ServingBinary(["--state", "sqlite:" + path])
        let envelope = try ServingBinary(["--state", "sqlite:" + path, "--profile", "envelope"])
        // Another process holds the write lock longer than the 5 s busy timeout
        // (twice over: the two requests to one server wait in turn).
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        locker.arguments = [
            "python3", "-c",
            "import sqlite3, sys, time\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\nc.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(20)",
            path,
        ]
        let output = Pipe()
        locker.standardOutput = output
        try locker.run()
        defer { locker.terminate() }
        _ = output.fileHandleForReading.availableData  // "locked"
        async let token = oauth2.withClient { client in
            try await client.form("/oauth/token", "grant_type=password&username=alice&password=wonderland")
        }
        async let control = oauth2.withClient { client in try await client.get("/_authmock/tokens") }
        async let login = envelope.withClient { client in
            try await client.post(
                "/auth/login", headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"username": "alice", "password": "wonderland"}"#))
        }
        let (tokenAnswer, controlAnswer, loginAnswer) = try await (token, control, login)
        #expect(tokenAnswer.status == .serviceUnavailable)
        #expect(try tokenAnswer.json()["error"] as? String == "temporarily_unavailable")
        #expect(controlAnswer.status == .serviceUnavailable)
        #expect(try controlAnswer.json()["error"] as? String == "store_unavailable")
        #expect(loginAnswer.status == .serviceUnavailable)
        let error = try #require(try loginAnswer.json()["error"] as? [String: Any])
        #expect(error["code"] as? Int == 50300)
        _ = oauth2.interrupt()
        _ = envelope.interrupt()
    }

    @Test func aBadStateSettingExitsWithAReason() async throws {
        let run = try await runAuthmock(["serve", "--port", "0", "--state", "redis://x"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--state must be memory, sqlite:PATH or postgres://"), "\(run.stderr)")
        let unreachable = try await runAuthmock(["serve", "--port", "0", "--state", "sqlite:/nonexistent-dir/x.db"])
        #expect(unreachable.status != 0)
        #expect(unreachable.stderr.contains("cannot open the database"), "\(unreachable.stderr)")
    }

    /// A PostgreSQL that is not there: the reason within seconds (the pool
    /// used to retry quietly for 45-67 s), the password hidden, and no usage
    /// text (the command line was fine).
    @Test func anUnreachableDatabaseIsAClearStartErrorInSeconds() async throws {
        let started = Date()
        let refused = try await runAuthmock(["serve", "--port", "0", "--state", "postgres://authmock:secret@127.0.0.1:1/authmock?sslmode=disable"])
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("postgres://authmock:***@127.0.0.1:1/authmock?sslmode=disable: cannot connect: 127.0.0.1:1: connection refused"),
            "\(refused.stderr)")
        #expect(!refused.stderr.contains("secret") && !refused.stderr.contains("Usage:"), "\(refused.stderr)")
        let unknown = try await runAuthmock(["serve", "--port", "0", "--state", "postgres://authmock@no-such-host.invalid/authmock"])
        #expect(unknown.status == 1 && unknown.stderr.contains("cannot connect: unknown host no-such-host.invalid"), "\(unknown.stderr)")
        let timeout = try await runAuthmock(["serve", "--port", "0", "--state", "postgres://authmock@127.0.0.1/authmock?timeout=soon"])
        #expect(
            timeout.status != 0 && timeout.stderr.contains("timeout must be a number of seconds from 0.05 to 3600, got soon"), "\(timeout.stderr)")
    }

    /// A state file whose kept values authmock never wrote (edited by hand,
    /// half-copied): serve refuses it at start, naming the file and the
    /// value, where a NaN or 1e300 clock offset used to crash the first
    /// token request and an empty key list crashed the start.
    @Test(.timeLimit(.minutes(1))) func corruptStoredStateIsAClearErrorNamingTheFile() async throws {
        let path = Self.temporaryDatabase()
        defer { Self.removeDatabase(path) }
        #expect(try ServingBinary(["--state", "sqlite:" + path, "--signing-alg", "ES256"]).interrupt().status == 0)
        func edit(_ sql: String) async throws {
            let run = try await runProcess(
                "python3", ["-c", "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.execute(sys.argv[2])\nc.commit()", path, sql])
            #expect(run.status == 0, "\(run.stderr)")
        }
        for (value, fragment) in [("NaN", "clock offset 'NaN'"), ("1e300", "clock offset '1e300'"), ("soon", "clock offset 'soon'")] {
            try await edit(
                "INSERT INTO authmock_meta (key, value) VALUES ('clock_offset', '\(value)') ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            let run = try await runAuthmock(["serve", "--port", "0", "--state", "sqlite:" + path, "--signing-alg", "ES256"])
            #expect(run.status != 0, "\(value): \(run.stderr)")
            #expect(run.stderr.contains("sqlite:" + path) && run.stderr.contains(fragment), "\(run.stderr)")
        }
        try await edit("UPDATE authmock_meta SET value = '0' WHERE key = 'clock_offset'")
        try await edit(#"UPDATE authmock_meta SET value = '{"algorithm": "ES256", "version": 1, "keys": []}' WHERE key = 'keys'"#)
        let run = try await runAuthmock(["serve", "--port", "0", "--state", "sqlite:" + path, "--signing-alg", "ES256"])
        #expect(run.status != 0, "\(run.stderr)")
        #expect(run.stderr.contains("sqlite:" + path) && run.stderr.contains("no current key"), "\(run.stderr)")
        // A key that is no PEM at all: named as the stored keys, with the store (it said only "invalidPEMDocument").
        try await edit(
            #"UPDATE authmock_meta SET value = '{"algorithm": "ES256", "version": 1, "keys": [{"kid": "k1", "pem": "garbage"}]}' WHERE key = 'keys'"#)
        let garbage = try await runAuthmock(["serve", "--port", "0", "--state", "sqlite:" + path, "--signing-alg", "ES256"])
        #expect(garbage.status != 0, "\(garbage.stderr)")
        #expect(
            garbage.stderr.contains("--state sqlite:" + path) && garbage.stderr.contains("the kept signing keys cannot be used"), "\(garbage.stderr)")
    }

    /// The whole built-in suite, with the reference client, against case
    /// servers on a SQLite file each: a store changes nothing a client sees.
    /// 32 cases at once, a file each (18 s on two cores; 67 s at 6). The
    /// PostgreSQL run below stays at 6: its cases share one server, and at 32
    /// its queries outlast their deadline now and then (a 503, as an outage).
    @Test func theBuiltInSuitePassesOnSQLite() async throws {
        let run = try await runAuthmock(["run", "--driver", try referenceDriver(), "--state", "sqlite", "--jobs", "32"])
        #expect(run.status == 0, "\(run.stdout.suffix(2000))\n\(run.stderr)")
        #expect(run.stdout.contains(" passed, 0 failed, 0 skipped"))
    }
}

/// PostgreSQL started by scripts/postgres.sh (scripts/test.sh does it and
/// exports its URL): without it these tests do not run.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["AUTHMOCK_TEST_POSTGRES_URL"] != nil))
struct PostgresStateTests {
    var url: String { ProcessInfo.processInfo.environment["AUTHMOCK_TEST_POSTGRES_URL"] ?? "" }

    /// Three replicas on one database, 1,000 concurrent refreshes of one
    /// token spread over them: exactly one wins, the rest see reuse, and
    /// the login is revoked everywhere.
    @Test func threeReplicasAgreeOnOneRotation() async throws {
        // Quiet logs: a request log line each would fill the unread stderr pipe.
        let replicas = try (0..<3).map { _ in
            try ServingBinary(["--state", url, "--public-url", StateStoreTests.issuer, "--log-level", "error"])
        }
        let reset = try await replicas[0].withClient { try await $0.post("/_authmock/reset", body: ByteBuffer()) }
        #expect(reset.status == .ok)
        let login = try await replicas[0].withClient { client in
            try await client.form("/oauth/token", "grant_type=password&username=alice&password=wonderland")
        }.json()
        let refresh = try #require(login["refresh_token"] as? String)

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 100
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let body = "grant_type=refresh_token&refresh_token=\(refresh)"
        // A failure in a task must still shut the client down (its deinit traps otherwise).
        let answers: [(Int, String?)]
        do {
            answers = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<1000 {
                    let port = replicas[index % 3].port
                    group.addTask {
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/oauth/token")
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                        request.headers.add(name: "Authorization", value: "Basic " + Data("demo:demo-secret".utf8).base64EncodedString())
                        request.body = .bytes(ByteBuffer(string: body))
                        let response = try await http.execute(request, timeout: .seconds(60))
                        let bytes = try await response.body.collect(upTo: 1 << 16)
                        let json = try JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]
                        return (Int(response.status.code), json?["access_token"] as? String ?? json?["error"] as? String)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        let winners = answers.filter { $0.0 == 200 }
        #expect(winners.count == 1, "exactly one refresh wins: \(Dictionary(grouping: answers, by: \.0).mapValues(\.count))")
        // The others see reuse; under load some meet a busy database instead
        // (51 of 999 in one CI run): a 503 `temporarily_unavailable`
        // (docs/state.md), which the client retries, and nothing else.
        let reused = answers.filter { $0.0 == 400 && $0.1 == "invalid_grant" }.count
        let busy = answers.filter { $0.0 == 503 && $0.1 == "temporarily_unavailable" }.count
        #expect(reused + busy == 999 && reused >= 800, "\(Dictionary(grouping: answers, by: { "\($0.0) \($0.1 ?? "")" }).mapValues(\.count))")

        // Every replica now sees one revoked login, and refuses the winner's token.
        let tokens = try await replicas[1].withClient { try await $0.get("/_authmock/tokens") }.json()
        let families = try #require(tokens["families"] as? [[String: Any]])
        #expect(families.count == 1 && families.first?["state"] as? String == "revoked", "\(families)")
        if let access = winners.first?.1 {
            for replica in replicas {
                let me = try await replica.withClient { try await $0.get("/api/me", headers: [.authorization: "Bearer \(access)"]) }
                #expect(me.status == .unauthorized)
            }
        }
        // One journal: read through any replica, every request once, in one order.
        let journal = try await replicas[2].withClient { try await $0.get("/_authmock/journal?kind=token") }.json()
        let entries = try #require(journal["entries"] as? [[String: Any]])
        let seqs = entries.compactMap { $0["seq"] as? Int }
        #expect(entries.count == 1001, "the login and 1,000 refreshes, whichever replica answered")
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
        #expect(entries.filter { $0["status"] as? Int == 200 && $0["grantType"] as? String == "refresh_token" }.count == 1)
        let hosts = Set(entries.compactMap { $0["host"] as? String })
        #expect(hosts.count == 3, "each replica wrote its own requests: \(hosts)")

        // One clock: moved through one replica, read through another.
        _ = try await replicas[2].withClient {
            try await $0.post("/_authmock/clock/advance", headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"seconds": 30}"#))
        }
        let clock = try await replicas[0].withClient { try await $0.get("/_authmock/clock") }.json()
        #expect(clock["offsetSeconds"] as? Double == 30)
        _ = try await replicas[0].withClient { try await $0.post("/_authmock/reset", body: ByteBuffer()) }
        for replica in replicas { _ = replica.interrupt() }
    }

    /// Replicas on one database sign with the same key pair, and a rotation
    /// through one is the rotation of all: the others publish the new key,
    /// sign with it, and verify what it signed.
    @Test func replicasShareKeyPairsAndTheirRotation() async throws {
        let replicas = try (0..<2).map { _ in
            try ServingBinary(["--state", url, "--public-url", StateStoreTests.issuer, "--signing-alg", "ES256", "--log-level", "error"])
        }
        let signIn = "grant_type=password&username=alice&password=wonderland&scope=openid%20read"
        let before = try await replicas[0].withClient { try await $0.get("/oauth/jwks") }.json()
        #expect(try StateStoreTests.kids(before) == StateStoreTests.kids(try await replicas[1].withClient { try await $0.get("/oauth/jwks") }.json()))
        let early = try #require(try await replicas[1].withClient { try await $0.form("/oauth/token", signIn) }.json()["access_token"] as? String)

        let rotated = try await replicas[0].withClient { try await $0.post("/_authmock/keys/rotate", body: ByteBuffer()) }
        #expect(rotated.status == .ok)
        let kids = try StateStoreTests.kids(try await replicas[0].withClient { try await $0.get("/oauth/jwks") }.json())
        #expect(kids.count >= 2)
        let view = try await replicas[1].withClient { try await $0.get("/_authmock/keys") }.json()
        #expect((view["keys"] as? [[String: Any]])?.first?["kid"] as? String == kids.first)
        #expect(try StateStoreTests.kids(try await replicas[1].withClient { try await $0.get("/oauth/jwks") }.json()) == kids)
        // Signed by replica 1 after the rotation (through replica 0): the new kid; both replicas verify both tokens.
        let late = try #require(try await replicas[1].withClient { try await $0.form("/oauth/token", signIn) }.json()["access_token"] as? String)
        #expect(try StateStoreTests.header(late)["kid"] as? String == kids.first)
        for replica in replicas {
            for token in [early, late] {
                let me = try await replica.withClient { try await $0.get("/api/me", headers: [.authorization: "Bearer \(token)"]) }
                #expect(me.status == .ok)
            }
        }
        _ = try await replicas[0].withClient { try await $0.post("/_authmock/reset", body: ByteBuffer()) }
        for replica in replicas { _ = replica.interrupt() }
    }

    /// The shared journal is bounded like the in-memory one, counts what it
    /// dropped once for the cluster, and a reset through one replica empties
    /// it for all.
    @Test func theSharedJournalIsBoundedAndReadFromAnyReplica() async throws {
        let replicas = try (0..<2).map { _ in
            try ServingBinary(["--state", url, "--public-url", StateStoreTests.issuer, "--journal-limit", "20", "--log-level", "error"])
        }
        #expect(replicas[0].banner.contains("journal: table authmock_journal in"))
        _ = try await replicas[0].withClient { try await $0.post("/_authmock/reset", body: ByteBuffer()) }
        for index in 0..<50 {
            let answer = try await replicas[index % 2].withClient {
                try await $0.get("/health", headers: [HTTPField.Name("X-Authmock-Call")!: "c\(index)"])
            }
            #expect(answer.status == .ok)
        }
        let journal = try await replicas[1].withClient { try await $0.get("/_authmock/journal") }.json()
        let entries = try #require(journal["entries"] as? [[String: Any]])
        #expect(entries.compactMap { $0["seq"] as? Int } == Array(31...50))
        #expect(entries.compactMap { $0["call"] as? String } == (30..<50).map { "c\($0)" })
        #expect(journal["dropped"] as? Int == 30)
        let since = try await replicas[0].withClient { try await $0.get("/_authmock/journal?since=45&call=c47") }.json()
        #expect((since["entries"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [48])
        let count = try await replicas[0].withClient { try await $0.get("/_authmock/journal/count?kind=health") }.json()
        #expect(count["count"] as? Int == 20)

        _ = try await replicas[1].withClient { try await $0.post("/_authmock/reset", body: ByteBuffer()) }
        _ = try await replicas[0].withClient { try await $0.get("/health") }
        let afterReset = try await replicas[1].withClient { try await $0.get("/_authmock/journal") }.json()
        #expect((afterReset["entries"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [1])
        #expect(afterReset["dropped"] as? Int == 0)

        // An answer held 30 s, released after 300 ms by removing its rule:
        // the shared entry is amended to say when the answer really went.
        let rule = #"{"match": {"kind": "health"}, "action": {"type": "delay-response", "ms": 30000}}"#
        let added = try await replicas[0].withClient {
            try await $0.post("/_authmock/faults", headers: [.contentType: "application/json"], body: ByteBuffer(string: rule))
        }
        #expect(added.status == .created, "\(added.body.map { String(buffer: $0) } ?? "")")
        async let held = replicas[0].withClient { try await $0.get("/health") }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await replicas[0].withClient { try await $0.delete("/_authmock/faults", body: ByteBuffer()) }.status == .ok)
        #expect(try await held.status == .ok)
        let amended = try await replicas[1].withClient { try await $0.get("/_authmock/journal?since=1") }.json()
        let ms = try #require((amended["entries"] as? [[String: Any]])?.first?["durationMs"] as? Double)
        #expect(ms >= 250 && ms < 10_000, "the shared journal says the answer took \(ms) ms")
        for replica in replicas { _ = replica.interrupt() }
    }

    /// At 12 case runs (3 of 3 green, 80 s -> 49 s): at 32 the shared
    /// server made queries outlast their deadline (a 503, judged as the
    /// client's) one run in four.
    @Test func theBuiltInSuitePassesOnPostgres() async throws {
        let run = try await runAuthmock(["run", "--driver", try referenceDriver(), "--state", url, "--jobs", "12"])
        #expect(run.status == 0, "\(run.stdout.suffix(2000))\n\(run.stderr)")
        #expect(run.stdout.contains(" passed, 0 failed, 0 skipped"))
    }
}
