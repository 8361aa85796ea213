import AuthmockDialect
import AuthmockFileFormat
import UnixSignals
import AsyncHTTPClient
import ArgumentParser
import AuthmockCore
import AuthmockModel
import AuthmockProxy
import AuthmockScenario
import AuthmockServer
import Foundation
import Logging
import NIOCore
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Start the mock OAuth server.",
        discussion: """
            Server settings (flag, environment variable, default): a flag wins over its environment \
            variable, which wins over --config, which wins over the default.

            \(ServerSetting.all.map { "  \($0.flag) \($0.typeName.uppercased())\n        \($0.environmentVariable); default \($0.defaultText): \($0.doc)" }.joined(separator: "\n"))

            The signing key comes from --signing-key, --signing-key-file, AUTHMOCK_SIGNING_KEY or the config \
            file's signing_key, in that order; without one a random key is drawn at start, so tokens do not \
            survive a restart.
            """
    )

    /// The server settings' flags (see the table in ServerSetting.swift), parsed with it.
    @Argument(parsing: .allUnrecognized, help: .hidden) var settingArguments: [String] = []

    @Option(name: .customLong("signing-key"), help: "HS256 secret for access tokens (prefer AUTHMOCK_SIGNING_KEY: flags show up in ps).")
    var signingKey: String?
    @Option(name: .customLong("signing-key-file"), help: "File holding the HS256 secret (trailing newline ignored).") var signingKeyFile: String?
    @Option(
        name: .customLong("admin-token"),
        help: "Bearer token the control API (/_authmock/) requires; mandatory off loopback. AUTHMOCK_ADMIN_TOKEN works too.") var adminToken: String?
    @Option(help: "YAML config file: users, clients, lifetimes (see docs/configuration.md).") var config: String?
    @Option(
        help:
            "The dialect served: a built-in dialect's name (`authmock dialects` lists them; default oauth2) or a dialect file describing your backend (docs/dialects.md). AUTHMOCK_DIALECT works too."
    ) var dialect: String?
    @Flag(help: "Serve HTTPS. Without --tls-cert/--tls-key a self-signed certificate for localhost and 127.0.0.1 is generated and its path printed.")
    var tls = false
    @Option(name: .customLong("tls-cert"), help: "PEM certificate (chain) for --tls.") var tlsCert: String?
    @Option(name: .customLong("tls-key"), help: "PEM private key for --tls.") var tlsKey: String?
    @Option(name: .customLong("tls-dir"), help: "Where a generated certificate is written (default .authmock-tls).") var tlsDir = ".authmock-tls"
    @Option(
        name: .customLong("tls-name"),
        help: "Extra host name or IPv4 address for a generated certificate (e.g. 10.0.2.2 for the Android emulator); repeatable.") var tlsName:
        [String] = []
    @Option(name: .customLong("log-format"), help: "text (default, for people) or json (one object per line, for log collectors).") var logFormat:
        String?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (default info: one line per request).")
    var logLevel: String?
    @Flag(
        help:
            "Judge what the client does on its own with the suite's expectations (superfluous refreshes, reuse, stale tokens, ...): GET /_authmock/verdicts, `authmock ctl verdicts`, and a summary at shutdown."
    )
    var judge = false
    @Option(name: .customLong("json"), help: "With --judge: write the verdicts to this file at shutdown (JSON, as GET /_authmock/verdicts).")
    var verdictsFile: String?
    @Option(name: .customLong("junit"), help: "With --judge: write the verdicts as JUnit XML at shutdown (one test case: the traffic).")
    var junitFile: String?
    @Option(
        name: .customLong("html"),
        help: "With --judge: write the run report's page of the traffic at shutdown (findings, causes, time line, journal).")
    var htmlFile: String?
    @Option(
        help:
            "YAML file of steps to carry out while the app runs: expire, revoke, advance_clock, set_clock or fault, each after a while, every so often, or after N refreshes (docs/proxy.md)."
    )
    var plan: String?

    func run() async throws { try await start(upstream: nil) }

    /// Starts the server; with `upstream`, as `authmock proxy` in front of that backend.
    func start(upstream: UpstreamOptions?) async throws {
        let logger = try bootstrapLogging()
        var options = try serverOptions()
        options.upstream = upstream
        options.judge = judge
        let steps: Plan?
        do {
            steps = try plan.map(Plan.load(file:))
        } catch {
            throw ValidationError("--plan \(error.description)")
        }
        let mock = try await startMock(options)
        let certificate = certificatePath(options)
        // A proxy's HTTP client, shut down when the server has stopped.
        let client = upstream.map { UpstreamForwarder.makeClient($0) }
        let forwarder = client.map { UpstreamForwarder(mock: mock, client: $0).forwarding }
        let app = try AuthmockApplication.make(mock: mock, logger: logger, forwarder: forwarder) { port in
            printBanner(mock, port: port, certificate: certificate)
        }
        // Requests in flight get `drain` seconds after SIGTERM/SIGINT; then the
        // server is cancelled, which closes every connection, stalled ones too.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: app), .init(service: MemoryReturn(mock: mock))]
        // A plan that has done all its steps leaves the server running.
        if let steps {
            services.append(
                .init(
                    service: PlanService(runner: PlanRunner(plan: steps, control: mock.control, logger: logger)), successTerminationBehavior: .ignore)
            )
        }
        var configuration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(options.drainSeconds)
        configuration.maximumCancellationDuration = .seconds(2)
        let ran: Result<Void, any Error>
        do {
            try await ServiceGroup(configuration: configuration).run()
            ran = .success(())
        } catch {
            ran = .failure(error)
        }
        try? await client?.shutdown()
        if judge { await reportVerdicts(mock) }
        try explainListening(ran, options)
    }

    /// The log level and format from the flags or the environment, installed for the process.
    func bootstrapLogging() throws -> Logger {
        let environment = ProcessInfo.processInfo.environment
        let logLevel = self.logLevel ?? environment["AUTHMOCK_LOG_LEVEL"] ?? "info"
        let logFormat = self.logFormat ?? environment["AUTHMOCK_LOG_FORMAT"] ?? "text"
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of: \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard logFormat == "text" || logFormat == "json" else { throw ValidationError("--log-format must be text or json") }
        let json = logFormat == "json"
        LoggingSystem.bootstrap { label in
            if json { return JSONLogHandler(label: label, logLevel: level) }
            return TextLogHandler(label: label, logLevel: level)
        }
        var logger = Logger(label: "authmock")
        logger.logLevel = level
        return logger
    }

    /// The settings from flags, the environment and `--config`, each problem as a usage error.
    func serverOptions() throws -> ServerOptions {
        do {
            return try resolveOptions()
        } catch let error as ConfigError {
            throw ValidationError(error.description)
        } catch let error as SettingsError {
            throw ValidationError(error.description)
        } catch let error as TLSSetupError {
            throw ValidationError(error.description)
        }
    }

    /// The mock over the state `--state` names; a setting it refuses is a
    /// usage error, a store that cannot be opened an error exit.
    func startMock(_ options: ServerOptions) async throws -> Authmock {
        do {
            return try await Authmock(options: options, state: try await .open(options), judge: TrafficJudge())
        } catch let error as SettingsError {
            throw ValidationError(error.description)
        } catch let error as StartError {
            FileHandle.standardError.write(Data("Error: \(error.description)\n".utf8))
            throw ExitCode.failure
        }
    }

    /// The certificate a client must trust, for the banner (nil without `--tls`).
    func certificatePath(_ options: ServerOptions) -> String? {
        guard options.tls != nil else { return nil }
        let file =
            tlsCert ?? ProcessInfo.processInfo.environment["AUTHMOCK_TLS_CERT"]
            ?? (tlsDir as NSString).appendingPathComponent("authmock-localhost.crt")
        return URL(fileURLWithPath: file).standardizedFileURL.path
    }

    /// How the server ended: an address it could not listen on, said so a person can act.
    func explainListening(_ ran: Result<Void, any Error>, _ options: ServerOptions) throws {
        do {
            try ran.get()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            let taken = "\(options.host):\(options.port)"
            throw ServeStartError(
                "\(taken) is taken (another authmock serve, or another server): stop it, or pick another port with --port N (--port 0: any free port, printed at start)"
            )
        } catch let error as IOError where error.errnoCode == EADDRNOTAVAIL {
            throw ServeStartError(
                "cannot listen on \(options.host): no such address on this machine (--host 127.0.0.1, or 0.0.0.0 for every interface)")
        }
    }

    /// `--judge` at shutdown: the verdicts in a few lines, and the file `--json` names.
    func reportVerdicts(_ mock: Authmock) async {
        guard let verdicts = try? await mock.control.verdicts() else { return }
        var lines = [
            "verdict: \(verdicts.verdict.uppercased()) (\(verdicts.requests) requests, \(verdicts.logins) login\(verdicts.logins == 1 ? "" : "s"))"
        ]
        for cause in verdicts.causes { lines.append("cause: \(cause.title) [\(cause.id)]") }
        for finding in verdicts.findings where !finding.passed { lines.append("  \(finding.expectation): \(finding.message)") }
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var files: [(path: String, bytes: () throws -> Data)] = []
        if let verdictsFile { files.append((verdictsFile, { try encoder.encode(verdicts) })) }
        if junitFile != nil || htmlFile != nil {
            let entries = (try? await mock.control.journal().entries) ?? []
            let tokens = (try? await mock.control.tokens()) ?? TokenSnapshot(families: [], access: [], refresh: [], pruned: PrunedCounts())
            let traffic = TrafficJudge.result(
                entries: entries, tokens: tokens, endpointPaths: Set(mock.dialect.endpointPaths), dialect: mock.dialect.name)
            if let junitFile {
                files.append((junitFile, { Data(Reports.junit([traffic], seconds: traffic.seconds, suite: "authmock --judge").utf8) }))
            }
            if let htmlFile {
                let run = RunReportPage.Run(driver: "the app through authmock", seconds: traffic.seconds, suite: nil)
                files.append((htmlFile, { Data(RunReportPage.html([traffic], run: run).utf8) }))
            }
        }
        for file in files {
            do {
                try file.bytes().write(to: URL(fileURLWithPath: file.path))
            } catch {
                FileHandle.standardError.write(Data("cannot write the verdicts to \(file.path): \(error)\n".utf8))
            }
        }
    }

    /// The setting flags given, by key: `--access-ttl 60` and `--access-ttl=60`.
    /// An unknown flag is an error with a "did you mean".
    func settingFlags() throws -> [String: String] {
        var values: [String: String] = [:]
        var rest = settingArguments[...]
        while let argument = rest.popFirst() {
            let (name, inline) =
                argument.firstIndex(of: "=").map { (String(argument[..<$0]), Optional(String(argument[argument.index(after: $0)...]))) }
                ?? (argument, nil)
            guard let setting = ServerSetting.flagged(name) else {
                let known = ServerSetting.all.map(\.flag)
                throw ValidationError("unknown option '\(name)'\(Suggestion.hint(for: name, in: known)); see 'authmock serve --help'")
            }
            guard let value = inline ?? rest.popFirst() else { throw ValidationError("\(name) needs a value (\(setting.typeText))") }
            values[setting.key] = value
        }
        return values
    }

    func resolveOptions() throws -> ServerOptions {
        let file = try (config ?? ProcessInfo.processInfo.environment["AUTHMOCK_CONFIG"]).map(ConfigFile.load(path:)) ?? ConfigFile()
        // Every flag has an environment variable, AUTHMOCK_ and the flag's
        // name (AUTHMOCK_ACCESS_TTL for --access-ttl): containers are
        // configured that way. Precedence: flag, environment, file, default.
        let environment = ProcessInfo.processInfo.environment
        func env(_ name: String) -> String? { environment["AUTHMOCK_" + name].flatMap { $0.isEmpty ? nil : $0 } }
        func envBool(_ name: String) throws -> Bool? {
            guard let text = env(name) else { return nil }
            guard let value = Bool(text.lowercased()) else { throw ConfigError("AUTHMOCK_\(name) must be true or false, got '\(text)'") }
            return value
        }
        var options = ServerOptions()
        if let users = file.users { options.directory.users = users }
        if let clients = file.clients { options.directory.clients = clients }
        let flags = try settingFlags()
        var given = Set<String>()
        for setting in ServerSetting.all {
            if let text = flags[setting.key] {
                setting.apply(try setting.parse(text, from: setting.flag), to: &options)
            } else if let text = env(setting.key.uppercased()) {
                setting.apply(try setting.parse(text, from: setting.environmentVariable), to: &options)
            } else if let value = file.settings[setting.key] {
                setting.apply(value, to: &options)
            } else {
                continue
            }
            given.insert(setting.key)
        }
        // A dialect file's settings are defaults for its backend: anything set above wins.
        if let name = dialect ?? env("DIALECT") {
            if given.contains("profile") {
                throw ConfigError("--dialect and --profile name the same thing (--profile NAME is --dialect NAME): give one")
            }
            do {
                try DialectLoader.serve(name, with: &options, except: given)
            } catch let error as ScenarioError {
                throw ConfigError("\(error.description) (authmock validate \(name) lists every problem)")
            }
        } else {
            try options.applyDialectSettings(except: given)
        }
        guard (0...65_535).contains(options.port) else { throw ConfigError("--port must be between 0 and 65535") }
        options.adminToken = adminToken ?? environment["AUTHMOCK_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 } ?? file.adminToken
        if let signingKey {
            options.signingKey = try SigningKey(secret: signingKey)
        } else if let signingKeyFile {
            guard let data = FileManager.default.contents(atPath: signingKeyFile),
                let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .newlines), !text.isEmpty
            else { throw ConfigError("--signing-key-file \(signingKeyFile): cannot read a key from it") }
            options.signingKey = try SigningKey(secret: text)
        } else if let key = environment["AUTHMOCK_SIGNING_KEY"], !key.isEmpty {
            options.signingKey = try SigningKey(secret: key)
        } else if let key = file.signingKey {
            options.signingKey = try SigningKey(secret: key)
        }
        let tlsFromEnvironment = try envBool("TLS") ?? false
        if tls || tlsFromEnvironment {
            options.tls = try tlsIdentity(cert: tlsCert ?? env("TLS_CERT"), key: tlsKey ?? env("TLS_KEY"))
        }
        return options
    }

    /// The configured certificate, or a self-signed one written to --tls-dir
    /// (kept across restarts, so a simulator trusts it once).
    func tlsIdentity(cert: String?, key: String?) throws -> TLSIdentity {
        switch (cert, key) {
        case let (cert?, key?):
            return try TLSIdentity.load(certificate: cert, key: key)
        case (nil, nil):
            let certPath = (tlsDir as NSString).appendingPathComponent("authmock-localhost.crt")
            let keyPath = (tlsDir as NSString).appendingPathComponent("authmock-localhost.key")
            if FileManager.default.fileExists(atPath: certPath), FileManager.default.fileExists(atPath: keyPath), tlsName.isEmpty {
                return try TLSIdentity.load(certificate: certPath, key: keyPath)
            }
            let identity = try TLSIdentity.selfSigned(extraNames: tlsName)
            try FileManager.default.createDirectory(atPath: tlsDir, withIntermediateDirectories: true)
            try identity.certificatePEM.write(toFile: certPath, atomically: true, encoding: .utf8)
            try identity.privateKeyPEM.write(toFile: keyPath, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
            return identity
        default:
            throw ConfigError("--tls-cert and --tls-key go together")
        }
    }
}

/// What a developer needs at start: where the server is, and a curl line to
/// paste. The key itself is never printed, only its id; passwords and client
/// secrets from `--config` are printed as shell variables.
private func printBanner(_ mock: Authmock, port: Int, certificate: String?) {
    let options = mock.options
    let host = options.host.contains(":") ? "[\(options.host)]" : options.host
    if let upstream = options.upstream {
        printProxyBanner(mock, upstream, url: "\(options.tls == nil ? "http" : "https")://\(host):\(port)")
        return
    }
    var lines = [
        "authmock \(AuthmockVersion.current) listening on \(options.tls == nil ? "http" : "https")://\(host):\(port) (\(options.dialect == nil ? "dialect" : "declared dialect") \(options.profile))",
        // The dialect's own sentence on the backend (docs/dialects.md: `summary`, printed at start).
        mock.dialect.summary.isEmpty ? "" : "dialect: \(mock.dialect.summary)",
        "access tokens: \(options.tokens.signingAlgorithm.rawValue), \(options.tokens.accessTTL) s, kid \(mock.authority.keyID)"
            + (options.signingKey.isRandom && options.state == "memory"
                ? " (random key: set AUTHMOCK_SIGNING_KEY, or --state sqlite:PATH, to keep tokens valid across restarts)" : ""),
        "token state: \(mock.authority.store.name)" + (options.state == "memory" ? " (lost at exit; docs/state.md)" : ""),
        mock.journal is MemoryJournal ? "" : "journal: \(mock.journal.location)",
        options.publicURL == nil ? "" : "public URL (issuer and metadata): \(mock.baseURL)",
        certificate.map { "TLS certificate (trust it in your simulator or emulator, see docs/tls.md): \($0)" } ?? "",
        "refresh tokens: \(options.tokens.refreshTTL) s, rotation \(options.tokens.rotateRefreshTokens ? "on" : "off"), reuse grace \(options.tokens.reuseGraceSeconds) s",
    ]
    lines.append("control API: \(mock.baseURL)/_authmock/ (or `authmock ctl`)" + (options.adminToken != nil ? ", admin token required" : ""))
    lines.append(
        "GraphQL: \(mock.baseURL)/graphql, token refusals \(options.graphQLAuthErrors == .body ? "in the body (UNAUTHENTICATED)" : "as HTTP 401") (docs/graphql.md)"
    )
    lines += mock.dialect.startupHints(baseURL: mock.baseURL, directory: mock.directory.redactedForDisplay)
    lines.removeAll { $0.isEmpty }
    // Written straight to the descriptor: a test or script reading the banner
    // through a pipe must not wait for a stdio buffer to fill.
    FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
}

/// Why `serve` could not start listening: printed as it is, exit status 1.
struct ServeStartError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// `authmock proxy`'s banner: where the app points, where requests go, and
/// what the proxy does to tokens on the way.
private func printProxyBanner(_ mock: Authmock, _ upstream: UpstreamOptions, url: String) {
    let options = mock.options
    var lines = [
        "authmock \(AuthmockVersion.current) proxy listening on \(url), forwarding to \(upstream.url.absoluteString) (\(options.dialect == nil ? "dialect" : "declared dialect") \(options.profile))",
        mock.dialect.summary.isEmpty ? "" : "dialect: \(mock.dialect.summary)",
        "tokens: learned from the backend's sign-in and refresh answers"
            + (mock.dialect.endpointPaths.isEmpty ? "" : " (\(mock.dialect.endpointPaths.joined(separator: ", ")))"),
        upstream.expireAfterSeconds.map {
            "expire-after: \($0.formatted()) s: an API call with an older access token gets the dialect's expired answer, not forwarded"
        } ?? "expire-after: off (move the clock or `authmock ctl expire` to expire the backend's tokens at the proxy)",
    ]
    // A device or an emulator reaches the proxy at one of the machine's own addresses.
    if !options.listensOnLoopbackOnly, let port = URL(string: url)?.port {
        let addresses = ((try? System.enumerateDevices()) ?? []).compactMap { $0.address?.ipAddress }.filter {
            !$0.hasPrefix("127.") && !$0.contains(":")
        }
        for address in Set(addresses).sorted() { lines.append("on a device: \(options.tls == nil ? "http" : "https")://\(address):\(port)") }
    }
    lines.append("control API: \(mock.baseURL)/_authmock/ (or `authmock ctl`)" + (options.adminToken != nil ? ", admin token required" : ""))
    lines.removeAll { $0.isEmpty }
    FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
}

/// `--plan`: the plan's steps beside the server, until it stops.
private struct PlanService: Service {
    let runner: PlanRunner

    func run() async throws {
        await cancelWhenGracefulShutdown { await runner.run() }
    }
}
