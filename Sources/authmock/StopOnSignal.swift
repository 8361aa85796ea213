import AuthmockTransports
import Dispatch
import Foundation

/// `authmock run` and `authmock matrix` stopped by SIGTERM, SIGINT or SIGHUP
/// (a CI job cancelled, a `timeout` wrapper, Ctrl-C) stop every driver they
/// started before they exit, with the signal's usual status (128 + number).
enum StopOnSignal {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    static func install() {
        for number in [SIGTERM, SIGINT, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let stopped = LiveDrivers.stopAll()
                FileHandle.standardError.write(
                    Data("authmock: stopped by signal \(number); stopped \(stopped) driver\(stopped == 1 ? "" : "s")\n".utf8))
                exit(128 + number)
            }
            source.resume()
            sources.append(source)
        }
    }
}
