import ArgumentParser
import AuthmockCore
import AuthmockServer
import Foundation
import Logging
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Start the mock OAuth server.",
        discussion: """
            Flags win over --config, which wins over the built-in defaults. The signing key comes from \
            --signing-key, --signing-key-file, AUTHMOCK_SIGNING_KEY or the config file's signing_key, in that \
            order; without one a random key is drawn at start, so tokens do not survive a restart.
            """
    )

    @Option(help: "Address to listen on.") var host: String?
    @Option(help: "Port to listen on; 0 picks a free port (the real one is printed).") var port: Int?
    @Option(help: "Server dialect: \(Profiles.names.joined(separator: ", ")).") var profile: String?
    @Option(name: .customLong("access-ttl"), help: "Access-token lifetime in seconds (default 300, minimum 1).") var accessTTL: Int?
    @Option(name: .customLong("sign-in-access-ttl"), help: "Lifetime in seconds of the access token issued at sign-in, when it should differ from --access-ttl (refreshed tokens keep --access-ttl).") var signInAccessTTL: Int?
    @Option(name: .customLong("refresh-ttl"), help: "Refresh-token lifetime in seconds (default 86400).") var refreshTTL: Int?
    @Option(name: .customLong("rotate-refresh"), help: "Rotate refresh tokens on every use: true or false (default true).") var rotateRefresh: Bool?
    @Option(name: .customLong("reuse-grace"), help: "Seconds a just-rotated refresh token still works (default 0: any reuse revokes the family).") var reuseGrace: Int?
    @Option(help: "Audience (`aud`) of issued access tokens (default authmock-api).") var audience: String?
    @Option(name: .customLong("public-url"), help: "Base URL clients use to reach the server (issuer and metadata), e.g. behind a proxy.") var publicURL: String?
    @Option(name: .customLong("max-body"), help: "Largest accepted request body in bytes (default 65536).") var maxBody: Int?
    @Option(name: .customLong("signing-key"), help: "HS256 secret for access tokens (prefer AUTHMOCK_SIGNING_KEY: flags show up in ps).") var signingKey: String?
    @Option(name: .customLong("signing-key-file"), help: "File holding the HS256 secret (trailing newline ignored).") var signingKeyFile: String?
    @Option(name: .customLong("journal-limit"), help: "Most requests the journal keeps; older ones are dropped and counted (default 100000).") var journalLimit: Int?
    @Option(name: .customLong("admin-token"), help: "Bearer token the control API (/_authmock/) requires; mandatory off loopback. AUTHMOCK_ADMIN_TOKEN works too.") var adminToken: String?
    @Option(name: .customLong("oauth2-errors"), help: "oauth2 profile: strict (default) or rfc-lax (vendor-style error mistakes).") var oauth2Errors: String?
    @Option(name: .customLong("rotation-header"), help: "header-rotation profile: response header carrying a new access token (default Authorization).") var rotationHeader: String?
    @Option(name: .customLong("rotate-every"), help: "header-rotation profile: rotate the access token on every Nth successful answer.") var rotateEvery: Int?
    @Option(name: .customLong("rotation-grace"), help: "header-rotation profile: seconds a rotated-away access token still works (default 0).") var rotationGrace: Int?
    @Option(name: .customLong("refresh-failure-status"), help: "reissue (default 406) and renewal (default 401) profiles: status of a failed refresh.") var refreshFailureStatus: Int?
    @Option(help: "YAML config file: users, clients, lifetimes (see docs/configuration.md).") var config: String?
    @Flag(help: "Serve HTTPS. Without --tls-cert/--tls-key a self-signed certificate for localhost and 127.0.0.1 is generated and its path printed.") var tls = false
    @Option(name: .customLong("tls-cert"), help: "PEM certificate (chain) for --tls.") var tlsCert: String?
    @Option(name: .customLong("tls-key"), help: "PEM private key for --tls.") var tlsKey: String?
    @Option(name: .customLong("tls-dir"), help: "Where a generated certificate is written (default .authmock-tls).") var tlsDir = ".authmock-tls"
    @Option(name: .customLong("tls-name"), help: "Extra host name or IPv4 address for a generated certificate (e.g. 10.0.2.2 for the Android emulator); repeatable.") var tlsName: [String] = []
    @Option(name: .customLong("log-format"), help: "text (default, for people) or json (one object per line, for log collectors).") var logFormat: String?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (default info: one line per request).") var logLevel: String?

    func run() async throws {
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
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "authmock")
        logger.logLevel = level

        let options: ServerOptions
        do {
            options = try resolveOptions()
        } catch let error as ConfigError {
            throw ValidationError(error.description)
        } catch let error as SettingsError {
            throw ValidationError(error.description)
        } catch let error as TLSSetupError {
            throw ValidationError(error.description)
        }
        let mock: Authmock
        do {
            mock = try await Authmock(options: options)
        } catch let error as SettingsError {
            throw ValidationError(error.description)
        }
        let certificate = options.tls == nil ? nil
            : URL(fileURLWithPath: tlsCert ?? ProcessInfo.processInfo.environment["AUTHMOCK_TLS_CERT"] ?? (tlsDir as NSString).appendingPathComponent("authmock-localhost.crt")).standardizedFileURL.path
        let app = AuthmockApplication.make(mock: mock, logger: logger) { port in
            printBanner(mock, port: port, certificate: certificate)
        }
        let group = ServiceGroup(configuration: .init(
            services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    func resolveOptions() throws -> ServerOptions {
        let file = try (config ?? ProcessInfo.processInfo.environment["AUTHMOCK_CONFIG"]).map(ConfigFile.load(path:)) ?? ConfigFile()
        // Every flag has an environment variable, AUTHMOCK_ and the flag's
        // name (AUTHMOCK_ACCESS_TTL for --access-ttl): containers are
        // configured that way. Precedence: flag, environment, file, default.
        let environment = ProcessInfo.processInfo.environment
        func env(_ name: String) -> String? { environment["AUTHMOCK_" + name].flatMap { $0.isEmpty ? nil : $0 } }
        func envInt(_ name: String) throws -> Int? {
            guard let text = env(name) else { return nil }
            guard let value = Int(text) else { throw ConfigError("AUTHMOCK_\(name) must be a whole number, got '\(text)'") }
            return value
        }
        func envBool(_ name: String) throws -> Bool? {
            guard let text = env(name) else { return nil }
            guard let value = Bool(text.lowercased()) else { throw ConfigError("AUTHMOCK_\(name) must be true or false, got '\(text)'") }
            return value
        }
        var options = ServerOptions()
        options.host = host ?? env("HOST") ?? file.host ?? options.host
        options.port = try port ?? envInt("PORT") ?? file.port ?? options.port
        options.profile = profile ?? env("PROFILE") ?? file.profile ?? options.profile
        options.tokens.accessTTL = try accessTTL ?? envInt("ACCESS_TTL") ?? file.accessTTL ?? options.tokens.accessTTL
        options.tokens.signInAccessTTL = try signInAccessTTL ?? envInt("SIGN_IN_ACCESS_TTL") ?? file.signInAccessTTL
        options.tokens.refreshTTL = try refreshTTL ?? envInt("REFRESH_TTL") ?? file.refreshTTL ?? options.tokens.refreshTTL
        options.tokens.rotateRefreshTokens = try rotateRefresh ?? envBool("ROTATE_REFRESH") ?? file.rotateRefresh ?? options.tokens.rotateRefreshTokens
        options.tokens.reuseGraceSeconds = try reuseGrace ?? envInt("REUSE_GRACE") ?? file.reuseGrace ?? options.tokens.reuseGraceSeconds
        options.tokens.audience = audience ?? env("AUDIENCE") ?? file.audience ?? options.tokens.audience
        options.publicURL = publicURL ?? env("PUBLIC_URL") ?? file.publicURL
        options.maxBodyBytes = try maxBody ?? envInt("MAX_BODY") ?? file.maxBody ?? options.maxBodyBytes
        if let users = file.users { options.directory.users = users }
        if let clients = file.clients { options.directory.clients = clients }
        guard (0...65_535).contains(options.port) else { throw ConfigError("--port must be between 0 and 65535") }
        options.journalLimit = try journalLimit ?? envInt("JOURNAL_LIMIT") ?? file.journalLimit ?? options.journalLimit
        if let style = oauth2Errors ?? env("OAUTH2_ERRORS") ?? file.oauth2Errors {
            guard let parsed = OAuth2ErrorStyle(rawValue: style) else { throw ConfigError("oauth2 errors must be strict or rfc-lax, got '\(style)'") }
            options.profileOptions.oauth2Errors = parsed
        }
        options.profileOptions.rotationHeader = rotationHeader ?? env("ROTATION_HEADER") ?? file.rotationHeader ?? options.profileOptions.rotationHeader
        options.profileOptions.rotateEvery = try rotateEvery ?? envInt("ROTATE_EVERY") ?? file.rotateEvery
        options.profileOptions.rotationGraceSeconds = try rotationGrace ?? envInt("ROTATION_GRACE") ?? file.rotationGrace ?? 0
        options.profileOptions.refreshFailureStatus = try refreshFailureStatus ?? envInt("REFRESH_FAILURE_STATUS") ?? file.refreshFailureStatus
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
/// paste. The key itself is never printed, only its id.
private func printBanner(_ mock: Authmock, port: Int, certificate: String?) {
    let options = mock.options
    let host = options.host.contains(":") ? "[\(options.host)]" : options.host
    var lines = [
        "authmock \(AuthmockVersion.current) listening on \(options.tls == nil ? "http" : "https")://\(host):\(port) (profile \(options.profile))",
        "access tokens: HS256, \(options.tokens.accessTTL) s, kid \(options.signingKey.id)"
            + (options.signingKey.isRandom ? " (random key: set AUTHMOCK_SIGNING_KEY to keep tokens valid across restarts)" : ""),
        options.publicURL == nil ? "" : "public URL (issuer and metadata): \(mock.baseURL)",
        certificate.map { "TLS certificate (trust it in your simulator or emulator, see docs/tls.md): \($0)" } ?? "",
        "refresh tokens: \(options.tokens.refreshTTL) s, rotation \(options.tokens.rotateRefreshTokens ? "on" : "off"), reuse grace \(options.tokens.reuseGraceSeconds) s",
    ]
    lines.append("control API: \(mock.baseURL)/_authmock/ (or `authmock ctl`)" + (options.adminToken != nil ? ", admin token required" : ""))
    lines += mock.profile.startupHints(baseURL: mock.baseURL, directory: options.directory)
    lines.removeAll { $0.isEmpty }
    // Written straight to the descriptor: a test or script reading the banner
    // through a pipe must not wait for a stdio buffer to fill.
    FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
}
