import Foundation

#if FUZZING
    /// libFuzzer's entry point; AUTHMOCK_FUZZ_TARGET names the target.
    let selectedTarget: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["AUTHMOCK_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("set AUTHMOCK_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue))\n".utf8))
            exit(2)
        }
        return target
    }()

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        selectedTarget.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }

    /// libFuzzer's driver (its own `main`, callable: SwiftPM names this
    /// executable's entry point, so the fuzzer starts from here).
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    @main struct Fuzzer {
        static func main() {
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            _ = selectedTarget
            exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOne))
        }
    }
#else
    /// The corpus replayer: `authmock-fuzz TARGET PATH...` feeds every file
    /// (directories: every file in them) to the target, as the fuzzer would.
    /// Tests run it over the checked-in corpus (Tests/Fuzz/).
    @main struct CorpusReplayer {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
                print("usage: authmock-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) PATH...")
                exit(2)
            }
            var count = 0
            for path in arguments.dropFirst() {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                    print("no such file: \(path)")
                    exit(2)
                }
                let files =
                    isDirectory.boolValue
                    ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map {
                        (path as NSString).appendingPathComponent($0)
                    } : [path]
                for file in files {
                    guard let data = FileManager.default.contents(atPath: file) else { continue }
                    target.run(Array(data))
                    count += 1
                }
            }
            print("\(target.rawValue): \(count) inputs replayed")
        }
    }
#endif
