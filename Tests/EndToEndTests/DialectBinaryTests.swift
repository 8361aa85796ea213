import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// docs/dialects.md's commands through the real binary, in an empty directory.
struct DialectBinaryTests {
    /// A built-in dialect written only as a file (dialects/simplejwt.yaml,
    /// named in no Swift) is a dialect like the others: `serve --profile`
    /// applies its settings, `run --profile` runs the cases that apply to it
    /// and sends drivers its description, and a misspelt dialect is a usage
    /// error with a suggestion.
    @Test func aBuiltInDialectFileNeedsNoSwift() async throws {
        let listed = try await runAuthmock(["dialects"])
        #expect(listed.stdout.contains("simplejwt"), "\(listed.stdout)")
        let server = try ServingBinary(["--profile", "simplejwt"])
        #expect(server.banner.contains("rotation on") && server.banner.contains("/api/token/refresh/"), "\(server.banner)")
        #expect(server.interrupt().status == 0)

        let run = try await runAuthmock([
            "run", "--verbose", "--driver", try referenceDriver(), "--profile", "simplejwt", "--case", "1.1", "--case", "3.1", "--case", "11.2",
            "--case", "2.3",
        ])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for id in ["1.1", "3.1", "11.2", "2.3"] { #expect(run.stdout.contains("PASS       \(id) [simplejwt]"), "\(run.stdout)") }

        let misspelt = try await runAuthmock(["run", "--driver", try referenceDriver(), "--profile", "simplejw"])
        #expect(misspelt.status == 2 && misspelt.stderr.contains("did you mean 'simplejwt'"), "\(misspelt)")
    }

    /// Every built-in dialect's banner: its "Sign in" and "Refresh" curl
    /// lines, run by a shell as printed, sign in and refresh (a line that
    /// left out what the endpoint's `match` asks for reached no endpoint).
    /// (header-rotation has no refresh endpoint: its banner shows a resource request instead.)
    @Test(arguments: builtInDialectFiles.filter { $0 != "header-rotation" })
    func theBannersCurlLinesSignInAndRefresh(profile: String) async throws {
        let server = try ServingBinary(["--profile", profile])
        defer { _ = server.interrupt() }
        let lines = server.banner.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let signIn = try #require(lines.firstIndex(of: "Sign in:").map { lines[$0 + 1] }, "\(server.banner)")
        let refresh = try #require(lines.firstIndex(of: "Refresh:").map { lines[$0 + 1] }, "\(server.banner)")
        // The sign-in's answer holds both tokens somewhere: the access token
        // is the first JWT, the refresh token the first value of a key that
        // says "refresh".
        let script = """
            answer=$(\(signIn)) || exit 1
            tokens=$(printf '%s' "$answer" | python3 -c 'import json, sys
            def pairs(v):
                if isinstance(v, dict): return [p for k, x in v.items() for p in ([(k, x)] if isinstance(x, str) else pairs(x))]
                return []
            found = pairs(json.load(sys.stdin))
            print(next(x for k, x in found if x.count(".") == 2), next(x for k, x in found if "refresh" in k.lower()))')
            ACCESS_TOKEN=${tokens% *}
            REFRESH_TOKEN=${tokens#* }
            \(refresh) -w '\\n%{http_code}'
            """
        let run = try await runProcess("/bin/sh", ["-c", script])
        #expect(run.status == 0 && run.stdout.hasSuffix("\n200"), "\(profile): \(run.stdout)\(run.stderr)\n\(server.banner)")
    }

    /// `--dialect NAME` where no file has that name is the built-in dialect
    /// of the name (it answered "cannot read the file as UTF-8 text" for a
    /// file that does not exist); a name that is neither says "no such
    /// file" with the built-in names and a "did you mean", in serve and in
    /// validate, which used to find nothing to check and exit 0.
    @Test func aDialectByNameIsTheBuiltInOne() async throws {
        let server = try ServingBinary(["--dialect", "supabase"])
        #expect(server.banner.contains("dialect supabase"), "\(server.banner)")
        _ = server.interrupt()
        let typo = try await runAuthmock(["serve", "--port", "0", "--dialect", "supabse"])
        #expect(typo.status == 2 && typo.stderr.contains("supabse:1:1: no such file") && typo.stderr.contains("did you mean 'supabase'"), "\(typo)")
        let checked = try await runAuthmock(["validate", "--dialect", "supabse"])
        #expect(checked.status != 0 && checked.stdout.contains("no such file"), "\(checked)")
        let builtIn = try await runAuthmock([
            "validate", "--dialect", "supabase", repositoryRoot.appendingPathComponent("scenarios/2.1-refresh-token-expired.yaml").path,
        ])
        #expect(builtIn.status == 0 && builtIn.stdout.contains("[supabase]"), "\(builtIn)")
    }

    @Test func theDocsCommandsWorkAsPrinted() async throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("authmock-dialect-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("acme.yaml").path

        let example = try await runAuthmock(["dialects", "--example"])
        #expect(example.status == 0)
        try example.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let valid = try await runAuthmock(["validate", file])
        #expect(valid.status == 0 && valid.stdout.contains("ok      \(file)  dialect acme"), "\(valid)")

        // Served: the banner's curl lines are the dialect's, and its sign-in answers in its shape.
        let server = try ServingBinary(["--dialect", file])
        #expect(server.banner.contains("(declared dialect acme)"), "\(server.banner)")
        #expect(
            server.banner.contains(
                #"-d "{\"credentials\":{\"login\":\"alice\",\"secret\":\"wonderland\"}}" http://127.0.0.1:\#(server.port)/v2/session"#))
        let session = try await server.withClient { client in
            let response = try await client.post(
                "/v2/session", headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"credentials": {"login": "alice", "secret": "wonderland"}}"#))
            #expect(response.status == .ok)
            return try #require(try response.json()["session"] as? [String: Any])["ttl"] as? String
        }
        // The file's settings are serve's defaults: access_ttl 900.
        #expect(session == "900")
        #expect(server.interrupt().status == 0)

        // The suite against it, a few cases for time's sake: every one PASSes.
        let run = try await runAuthmock([
            "run", "--verbose", "--driver", try referenceDriver(), "--dialect", file, "--case", "1.1", "--case", "2.1", "--case", "3.1",
        ])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("PASS       1.1 [acme]"), "\(run.stdout)")

        // A case of the team's own, on its dialect: it runs with --dialect, and without it is a usage error.
        let cases = directory.appendingPathComponent("cases")
        try FileManager.default.createDirectory(at: cases, withIntermediateDirectories: true)
        try """
        id: "acme.1"
        name: concurrent calls on an expired Acme session renew it once
        description: Five calls meet an expired token at once; one renewal, each call retried.
        profile: acme
        steps:
          - login: {}
          - advance_clock: 3600
          - parallel: {count: 5, request: {method: GET, path: /api/items}}
        expect:
          refreshes: 1
          outcomes: {ok: all}

        """.write(to: cases.appendingPathComponent("acme-1.yaml"), atomically: true, encoding: .utf8)
        let own = try await runAuthmock(["run", "--verbose", "--driver", try referenceDriver(), "--no-built-in", cases.path, "--dialect", file])
        #expect(own.status == 0 && own.stdout.contains("PASS       acme.1 [acme]"), "\(own.stdout)\(own.stderr)")
        let undeclared = try await runAuthmock(["run", "--driver", try referenceDriver(), "--no-built-in", cases.path])
        #expect(
            undeclared.status == 2 && undeclared.stderr.contains("case acme.1 runs on 'acme', a dialect no --dialect FILE declares"), "\(undeclared)")

        // validate --dialect: the cases against the dialect: where each runs, a fault that cannot fire there, a dialect nobody declares.
        try """
        id: "acme.2"
        name: a fault on a path Acme does not serve
        description: The rule can never fire on acme.
        profile: acme
        steps:
          - login: {}
          - fault: {match: {pathPrefix: /v3/session}, action: {type: respond, status: 503}}
          - request: {method: GET, path: /api/items}
        expect:
          outcomes: {ok: all}

        """.write(to: cases.appendingPathComponent("acme-2.yaml"), atomically: true, encoding: .utf8)
        let checked = try await runAuthmock(["validate", "--dialect", file, cases.path])
        let runsOn = "acme.1 concurrent calls on an expired Acme session renew it once [acme]"
        #expect(checked.status == 0 && checked.stdout.contains(runsOn), "\(checked)")
        let cannotFire = "acme-2.yaml:7:5: fault: match pathPrefix /v3/session is under no path acme serves"
        #expect(checked.stdout.contains(cannotFire), "\(checked)")
        let otherDialect = directory.appendingPathComponent("other.yaml").path
        let other = example.stdout.replacingOccurrences(of: "dialect: acme", with: "dialect: other")
        try other.write(toFile: otherDialect, atomically: true, encoding: .utf8)
        let unnamed = try await runAuthmock(["validate", "--dialect", otherDialect, cases.path])
        let undeclaredProfile = "dialect 'acme' is no built-in dialect and none of the given dialects (other)"
        #expect(unnamed.status == 2 && unnamed.stdout.contains(undeclaredProfile), "\(unnamed)")
        try FileManager.default.removeItem(at: cases.appendingPathComponent("acme-2.yaml"))

        // init --dialect: the dialect beside a first case that runs on it, and next steps that pass it.
        let scaffold = directory.appendingPathComponent("scaffold").path
        let made = try await runAuthmock(["init", "--dir", scaffold, "--dialect", file])
        #expect(made.status == 0, "\(made)")
        #expect(made.stdout.contains("authmock validate \(scaffold)/scenarios \(scaffold)/dialect.yaml"), "\(made.stdout)")
        #expect(made.stdout.contains("--dialect \(scaffold)/dialect.yaml"), "\(made.stdout)")
        let scaffolded = try await runAuthmock(["validate", "\(scaffold)/scenarios", "\(scaffold)/dialect.yaml"])
        #expect(scaffolded.status == 0 && scaffolded.stdout.contains("100.1 my first case [acme]"), "\(scaffolded)")
        let firstCase = try await runAuthmock([
            "run", "--verbose", "\(scaffold)/scenarios", "--no-built-in", "--driver", try referenceDriver(), "--dialect", "\(scaffold)/dialect.yaml",
        ])
        #expect(firstCase.status == 0 && firstCase.stdout.contains("PASS       100.1 [acme]"), "\(firstCase.stdout)")

        // A broken file: exit 2 and the place, from validate, serve and run alike.
        try example.stdout.replacingOccurrences(of: "{access_token}", with: "{acess_token}").write(toFile: file, atomically: true, encoding: .utf8)
        let invalid = try await runAuthmock(["validate", file])
        #expect(
            invalid.status == 2 && invalid.stdout.contains("\(file):16:15: tokens.body.session.access: '{acess_token}' is not a placeholder here"),
            "\(invalid)")
        #expect(invalid.stdout.contains("did you mean 'access_token'?"))
        let refused = try await runAuthmock(["serve", "--port", "0", "--dialect", file])
        #expect(refused.status != 0 && refused.stderr.contains("\(file):16:15"), "\(refused)")
        let refusedRun = try await runAuthmock(["run", "--driver", try referenceDriver(), "--dialect", file])
        #expect(refusedRun.status == 2 && refusedRun.stderr.contains("\(file):16:15"), "\(refusedRun)")
    }
}
