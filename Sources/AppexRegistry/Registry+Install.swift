import AppexBundle
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

extension Registry {
    /// One bundle copied into staging, waiting to be validated and placed.
    private struct StagedBundle {
        /// `<txn>/<slot>/` holds the copy; the slot directory becomes `bundles/<id>/<gen>`.
        var slot: EntryName
        var name: String
        /// The source bundle, for findings and the row.
        var sourcePath: String
        var digest: ContentDigest
        var bundle: ExtensionBundle?
    }

    /// Installs a containing app (a directory with `PlugIns/`: each `PlugIns/*.appex`) or a
    /// bare `.appex`. All or nothing: the copy is validated and every bundle placed before one
    /// transaction commits the rows.
    ///
    /// - The source is hostile: it is copied without following links (see `BundleCopier`)
    ///   and the *copy* is validated, so what was checked is what runs.
    /// - New extensions start disabled. Re-installing an identifier replaces its copy (a new
    ///   generation) and keeps its enabled state; re-installing an app also uninstalls those
    ///   of its extensions its new version lacks (data kept).
    /// - An identifier installed from one containing app (or bare) is not replaced from
    ///   another: `ownedByAnotherApp`.
    /// - An extension declaring an app group it is not a member of (AppGroupMembership) is
    ///   refused with `install.app-group`; an app's first install of an unowned group claims it.
    /// - Invalid bundles throw `invalidBundle` with every finding; nothing is installed.
    /// - With `options.requester` (a uid other than 0), the path is resolved and the source
    ///   read with that user's identity, on a thread of its own: what the user could not read
    ///   is refused, naming it.
    @discardableResult
    public func install(path: String, options: InstallOptions = InstallOptions()) throws -> InstallResult {
        let source = Self.absolute(path)
        guard let requester = options.requester, requester.uid != 0 else {
            return try withBundlesLocked { bundles in try install(source: source, options: options, reader: nil, bundles: bundles) }
        }
        return try OwnThread.run(name: "appex-install") { [self] in
            let reader = try ThreadFileIdentity(requester)
            return try withBundlesLocked { bundles in
                try install(source: source, options: options, reader: reader, bundles: bundles)
            }
        }
    }

    private func install(
        source: String, options: InstallOptions, reader: ThreadFileIdentity?,
        bundles: Int32
    ) throws -> InstallResult {
        let stagingPath = bundlesDirectory + "/.staging"
        let staging = try DirectoryFD.open(Self.stagingName, in: bundles, path: stagingPath)
        defer { DirectoryFD.close(staging) }
        let txnName = EntryName("install-" + String(UInt64.random(in: .min ... .max), radix: 16))
        let txnPath = stagingPath + "/" + txnName.display
        let txn = try DirectoryFD.make(txnName, in: staging, mode: 0o700, path: txnPath)
        defer {
            DirectoryFD.close(txn)
            try? DirectoryFD.removeTree(txnName, in: staging, path: txnPath)
        }

        // The path itself is the administrator's: its directories are followed (with their
        // identity), its last component is not.
        var copier = BundleCopier(reader: reader)
        let parentPath = (source as NSString).deletingLastPathComponent
        let leaf = (source as NSString).lastPathComponent
        guard !leaf.isEmpty, leaf != "/", leaf != ".", leaf != ".." else {
            throw RegistryError.unusableSource(path: source, problem: "is not a bundle directory")
        }
        let parent = try copier.source { open(parentPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        if parent < 0 {
            throw RegistryError.unusableSource(path: source, problem: "cannot open \(parentPath): \(copier.failure(errno))")
        }
        defer { DirectoryFD.close(parent) }
        let top: stat?
        do {
            top = try copier.source { try DirectoryFD.lstat(EntryName(leaf), in: parent, path: source) }
        } catch let RegistryError.system(_, _, code) {
            throw RegistryError.unusableSource(path: source, problem: copier.failure(code))
        }
        guard let top else { throw RegistryError.unusableSource(path: source, problem: "no such file or directory") }
        switch top.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: throw RegistryError.unusableSource(path: source, problem: "is a symbolic link; give the bundle's own path")
        default: throw RegistryError.unusableSource(path: source, problem: "is not a directory")
        }
        let root: Int32
        do {
            root = try copier.source { try DirectoryFD.open(EntryName(leaf), in: parent, path: source) }
        } catch let RegistryError.system(_, _, code) {
            throw RegistryError.unusableSource(path: source, problem: copier.failure(code))
        }
        defer { DirectoryFD.close(root) }
        let isApp: Bool
        do {
            isApp = try copier.source { try DirectoryFD.lstat(EntryName("PlugIns"), in: root, path: source + "/PlugIns") } != nil
        } catch let RegistryError.system(_, _, code) {
            throw RegistryError.unusableSource(path: source, problem: "cannot look into it: \(copier.failure(code))")
        }

        // 1. Copy.
        var staged: [StagedBundle] = []
        func stage(_ name: EntryName, in dir: Int32, sourceRelative: String, installedName: String) throws {
            let slot = EntryName(String(staged.count))
            let slotFD = try DirectoryFD.make(slot, in: txn, mode: 0o755, path: txnPath + "/" + slot.display)
            defer { DirectoryFD.close(slotFD) }
            let digest = try copier.copyBundle(
                name, in: dir, sourcePath: sourceRelative, to: EntryName(installedName),
                in: slotFD, destinationPath: txnPath + "/" + slot.display + "/" + installedName)
            try DirectoryFD.fsync(slotFD, path: txnPath + "/" + slot.display)
            if let digest {
                let sourcePath = sourceRelative.isEmpty ? source : source + "/" + sourceRelative
                staged.append(StagedBundle(slot: slot, name: installedName, sourcePath: sourcePath, digest: digest))
            }
        }
        if isApp {
            var ignored = ContentDigest()
            try copier.copyEntry(
                EntryName("Info.plist"), from: root, to: EntryName("app-Info.plist"), in: txn,
                at: .init(source: "", bundle: ""), digest: &ignored, depth: 0, destinationPath: txnPath)
            if let (plugInsFD, names) = try plugIns(of: root, source: source, copier: &copier) {
                defer { DirectoryFD.close(plugInsFD) }
                for name in names {
                    try stage(name, in: plugInsFD, sourceRelative: "PlugIns/" + name.display, installedName: name.display)
                }
            }
        } else {
            try stage(
                EntryName(leaf), in: parent, sourceRelative: "",
                installedName: leaf.hasSuffix(".appex") ? leaf : leaf + ".appex")
        }
        if !copier.findings.isEmpty {
            throw RegistryError.invalidBundle(source: source, bundles: [BundleFindings(path: source, findings: copier.findings)])
        }

        // 2. Validate the copy.
        var reports: [BundleFindings] = []
        var appInfo: InfoPlist?
        if isApp {
            var findings: [Finding] = []
            do {
                appInfo = try InfoPlist.load(path: txnPath + "/app-Info.plist")
                if appInfo?.bundleIdentifier?.isEmpty ?? true {
                    findings.append(.error("bundle.missing-key", at: "CFBundleIdentifier", "the containing app has no bundle identifier"))
                }
            } catch let error as PropertyListFileError {
                findings.append(
                    .error(
                        "plist.malformed", at: "Info.plist",
                        Self.sourceMessage(error.description, staged: txnPath + "/app-Info.plist", source: source + "/Info.plist")))
            }
            if staged.isEmpty {
                findings.append(.error("install.no-plugins", at: "PlugIns", "PlugIns/ holds no .appex bundles: nothing to install"))
            }
            reports.append(BundleFindings(path: source, findings: findings))
        }
        var seen: Set<String> = []
        // Judged under the bundles lock, which every claim is made under.
        var membership = try read("read app group owners") { db in
            try Self.appGroupMembership(db, grants: options.appGroupGrants)
        }
        var claims: [String] = []
        for index in staged.indices {
            let stagedPath = txnPath + "/" + staged[index].slot.display + "/" + staged[index].name
            var findings: [Finding]
            do {
                let bundle = try ExtensionBundle.load(path: stagedPath, containingAppIdentifier: appInfo?.bundleIdentifier)
                findings = BundleValidator.validate(bundle: bundle, extraExtensionPoints: options.extraExtensionPoints)
                findings += options.additionalChecks?(bundle) ?? []
                if let id = bundle.info.bundleIdentifier, !seen.insert(id).inserted {
                    findings.append(
                        .error(
                            "install.duplicate-identifier", at: "CFBundleIdentifier",
                            "another bundle in this install has the identifier \"\(id)\""))
                }
                if let id = bundle.info.bundleIdentifier {
                    let admitted = membership.admit(bundle, identifier: id, app: appInfo?.bundleIdentifier)
                    findings += admitted.findings
                    claims += admitted.claims
                }
                staged[index].bundle = bundle
            } catch let error as PropertyListFileError {
                findings = [
                    .error(
                        "plist.malformed", at: "Info.plist",
                        Self.sourceMessage(error.description, staged: stagedPath, source: staged[index].sourcePath))
                ]
            }
            reports.append(BundleFindings(path: staged[index].sourcePath, findings: findings))
        }
        if reports.contains(where: { $0.findings.hasErrors }) {
            throw RegistryError.invalidBundle(source: source, bundles: reports.filter { !$0.findings.isEmpty })
        }

        // 3. Place the copies, then commit the rows.
        let appID = appInfo?.bundleIdentifier
        let ids = staged.map { $0.bundle!.info.bundleIdentifier! }
        let (existing, previousOfApp) = try read("look up \(ids.joined(separator: ", "))") { db in
            (
                try ExtensionRecord.fetchAll(db, keys: ids),
                try appID.map { try ExtensionRecord.filter(Column("containingAppIdentifier") == $0).fetchAll(db) } ?? []
            )
        }
        let existingByID = Dictionary(uniqueKeysWithValues: existing.map { ($0.bundleIdentifier, $0) })
        for record in existing where record.containingAppIdentifier != appID {
            throw RegistryError.ownedByAnotherApp(
                identifier: record.bundleIdentifier,
                installedFrom: record.containingAppIdentifier, requestedFrom: appID)
        }
        let dropped = previousOfApp.filter { !ids.contains($0.bundleIdentifier) }

        let now = Date()
        var records: [ExtensionRecord] = []
        var placed: [(id: EntryName, generation: EntryName, isNew: Bool)] = []
        do {
            for (item, id) in zip(staged, ids) {
                let info = item.bundle!.info
                let generation = (existingByID[id]?.generation ?? 0) + 1
                let idName = EntryName(id), generationName = EntryName(String(generation))
                let idPath = bundlesDirectory + "/" + id
                let idFD = try DirectoryFD.make(idName, in: bundles, mode: 0o755, path: idPath)
                defer { DirectoryFD.close(idFD) }
                // A directory already there is a crashed attempt's: no row names it.
                try DirectoryFD.removeTree(generationName, in: idFD, path: idPath + "/" + generationName.display)
                try DirectoryFD.rename(item.slot, in: txn, to: generationName, in: idFD, path: idPath + "/" + generationName.display)
                placed.append((idName, generationName, existingByID[id] == nil))
                try DirectoryFD.fsync(idFD, path: idPath)
                records.append(
                    ExtensionRecord(
                        bundleIdentifier: id, extensionPoint: info.extensionInfo?.pointIdentifier ?? "",
                        displayName: info.name, version: info.version, shortVersion: info.shortVersion,
                        executable: info.executable ?? "",
                        bundlePath: "bundles/\(id)/\(generation)/\(item.name)", generation: generation,
                        sourcePath: item.sourcePath, containingAppIdentifier: appID,
                        isEnabled: existingByID[id]?.isEnabled ?? false, installedAt: now,
                        contentDigest: item.digest.description))
            }
            try DirectoryFD.fsync(bundles, path: bundlesDirectory)
            try write("install \(source)") { db in
                if let appInfo, let appID {
                    try AppRecord(
                        bundleIdentifier: appID, displayName: appInfo.name, version: appInfo.version,
                        shortVersion: appInfo.shortVersion, sourcePath: source, installedAt: now
                    ).save(db)
                }
                for record in records { try record.save(db) }
                if let appID { try Self.claim(claims, for: appID, at: now, in: db) }
                _ = try ExtensionRecord.deleteAll(db, keys: dropped.map(\.bundleIdentifier))
            }
        } catch {
            // Not committed: take back what was placed; the previous generations still stand.
            for p in placed {
                if let idFD = try? DirectoryFD.open(p.id, in: bundles, path: bundlesDirectory) {
                    try? DirectoryFD.removeTree(p.generation, in: idFD, path: bundlesDirectory)
                    DirectoryFD.close(idFD)
                }
                if p.isNew { try? DirectoryFD.removeTree(p.id, in: bundles, path: bundlesDirectory) }
            }
            throw error
        }

        // 4. Committed: the old copies are garbage. A failure here is finished by recovery.
        for record in existing {
            if let idFD = try? DirectoryFD.open(EntryName(record.bundleIdentifier), in: bundles, path: bundlesDirectory) {
                try? DirectoryFD.removeTree(EntryName(String(record.generation)), in: idFD, path: bundlesDirectory)
                DirectoryFD.close(idFD)
            }
        }
        for record in dropped {
            try? DirectoryFD.removeTree(EntryName(record.bundleIdentifier), in: bundles, path: bundlesDirectory)
        }

        // Read back, so the result is what the database holds (its dates are millisecond-precise).
        let installedApp = try appID.map { id in try apps().first { $0.bundleIdentifier == id } } ?? nil
        let installed = try read("read back \(source)") { db in
            try ExtensionRecord.filter(keys: ids).order(Column("bundleIdentifier")).fetchAll(db)
        }
        return InstallResult(
            app: installedApp,
            extensions: installed.map { $0.installed(stateDirectory: stateDirectory) },
            removedExtensions: dropped.map(\.bundleIdentifier).sorted(),
            warnings: reports.filter { !$0.findings.isEmpty })
    }

    /// The source app's `PlugIns/`, opened, and its `.appex` entries; nil (with a finding
    /// when it is there but not a plain directory) when there is nothing to install from it.
    private func plugIns(of root: Int32, source: String, copier: inout BundleCopier) throws -> (Int32, [EntryName])? {
        let location = BundleCopier.Location(source: "PlugIns", bundle: "")
        let path = source + "/PlugIns"
        guard let st = try copier.source({ try DirectoryFD.lstat(EntryName("PlugIns"), in: root, path: path) }) else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK:
            copier.refuse("install.symlink", location, "is a symbolic link; PlugIns/ must be a directory in the app")
            return nil
        default:
            copier.refuse("install.not-a-bundle", location, "is not a directory")
            return nil
        }
        let fd: Int32
        do {
            fd = try copier.source { try DirectoryFD.open(EntryName("PlugIns"), in: root, path: path) }
        } catch let RegistryError.system(_, _, code) {
            copier.refuse("install.unreadable", location, "cannot open: \(copier.failure(code))")
            return nil
        }
        guard let names = try DirectoryFD.names(in: fd, path: path, limit: InstallLimits.maximumEntries) else {
            DirectoryFD.close(fd)
            copier.refuse("install.too-many-entries", location, "holds more than \(InstallLimits.maximumEntries) entries")
            return nil
        }
        return (fd, names.filter { $0.string?.hasSuffix(".appex") ?? false })
    }

    /// A plist error about a staged file, reworded to name the source file.
    static func sourceMessage(_ message: String, staged: String, source: String) -> String {
        message.replacingOccurrences(of: staged, with: source)
            .replacingOccurrences(of: (staged as NSString).standardizingPath, with: source)
    }
}
