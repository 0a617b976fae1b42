// Command roce-wizard-vcsim is the practice lab's vCenter: govmomi's simulator (vcsim, pinned to
// govmomi v0.46.3) with the inventory of the lab's world and what stock vcsim lacks for the
// vsphere checks (RW301-RW307):
//
//   - a HostPciPassthruSystem per host, with HostSriovInfo for every ConnectX PF and
//     UpdatePassthruConfig (the VF count waits for a reboot: summary.rebootRequired says so);
//   - a HostPowerSystem per host with ConfigurePowerPolicy;
//   - HostSystem.RebootHost_Task: the host is notResponding for the lab's reboot delay, then
//     comes back with a new runtime.bootTime and its pending SR-IOV configuration active;
//   - ReconfigureDvs_Task that keeps DVS members with their pnic backing and applies maxMtu,
//     and CreateDVS_Task that adds the hosts of its spec;
//   - ReconfigVM_Task: memoryReservationLockedToMax also sets the memory reservation (as vCenter
//     does); SR-IOV adapters can be added or removed only while the VM is powered off;
//   - PowerOnVM_Task refuses a VM with an SR-IOV adapter whose memory is not fully reserved, or
//     whose PF has no VF left.
//
// Stock vcsim dispatches a SOAP call to a method of the Go object registered under the call's
// moref. Methods it lacks are added by re-pointing the call (Registry.Handler) to a proxy object
// registered under a moref of its own: returning a replacement object from the handler is not
// enough for logged-in sessions, and replacing the HostSystem object breaks the simulator's own
// type assertions. Tasks are named by their WSDL method (RebootHostTask), as pyVmomi expects.
//
// Usage:
//
//	ROCE_WIZARD_VCSIM_PASSWORD=secret roce-wizard-vcsim -l 127.0.0.1:0 -state DIR/vcenter-state.json
//
// prints one JSON line on stdout when it serves: {"url", "port", "thumbprint", "ca_file", "pid"}.
// TLS uses a certificate signed by a CA made for this run; the CA's PEM goes to -ca (default: the
// state file's directory, vcenter-ca.pem), which clients give as their CA file: verification
// stays on. The lab's own endpoints (same server, same credentials, HTTP basic auth):
//
//	GET  /lab/state[?since=N] the vSphere view of the world, in the state file's format, with
//	                         "version" (a change count); {"unchanged": true} when still N
//	POST /lab/update          a partial view (only the fields that changed) to apply
//	POST /lab/reboot?host=H   reboot host H as RebootHost_Task(force=true) would
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// ------------------------------------------------------------------------------------ the view

// View is the world's vSphere view: the state file, GET /lab/state, and (partially) POST /lab/update.
type View struct {
	Version      int64                `json:"version,omitempty"`   // output only: see changes
	Unchanged    bool                 `json:"unchanged,omitempty"` // output only: nothing moved since ?since=
	Datacenter   string               `json:"datacenter"`
	Cluster      string               `json:"cluster"`
	Datastore    string               `json:"datastore"`
	RebootDelayS float64              `json:"reboot_delay_s"`
	Hosts        map[string]*HostView `json:"hosts"`
	VMs          map[string]*VMView   `json:"vms"`
	DVS          *DVSView             `json:"dvs"`
}

type HostView struct {
	BootTime        float64            `json:"boot_time"` // seconds since the epoch
	BootCount       int                `json:"boot_count"`
	Connected       bool               `json:"connected"`
	MaintenanceMode bool               `json:"maintenance_mode"`
	PowerPolicy     string             `json:"power_policy"` // as ESXi's /Power/CpuPolicy names it
	PendingOther    bool               `json:"pending_other"`
	RebootRequired  bool               `json:"reboot_required"`          // output only: summary.rebootRequired
	RebootDelayS    *float64           `json:"reboot_delay_s,omitempty"` // input only: this host's own reboot delay
	Pnics           []PnicView         `json:"pnics,omitempty"`
	PFs             map[string]*PFView `json:"pfs"`
}

type PnicView struct {
	Device    string `json:"device"`
	PCI       string `json:"pci"`
	MAC       string `json:"mac"`
	SpeedMbps int    `json:"speed_mbps"`
	Driver    string `json:"driver"`
}

// PFView is one SR-IOV capable physical function (vSphere names it by PCI id, 0000:3b:00.0).
type PFView struct {
	Vmnic           string `json:"vmnic"`
	DeviceID        string `json:"device_id"` // hex, "1017"
	DeviceName      string `json:"device_name"`
	Capable         bool   `json:"capable"`   // sriovCapable
	MaxVFs          int    `json:"max_vfs"`   // maxVirtualFunctionSupported
	HwVFs           int    `json:"hw_vfs"`    // VFs the driver can instantiate (the world computes it)
	Enabled         bool   `json:"enabled"`   // sriovEnabled (configured)
	Requested       int    `json:"requested"` // numVirtualFunctionRequested
	ActiveEnabled   bool   `json:"active_enabled"`
	ActiveRequested int    `json:"active_requested"`
	NumVFs          int    `json:"num_vfs"` // output only: numVirtualFunction
	Active          bool   `json:"active"`  // output only: sriovActive
}

type VMView struct {
	Host                string  `json:"host"`
	PoweredOn           bool    `json:"powered_on"`
	VfPF                *string `json:"vf_pf"` // PCI id of the PF backing its SR-IOV adapter; null: none
	MemoryMB            int     `json:"memory_mb"`
	CPUs                int     `json:"cpus"`
	MemoryReserved      bool    `json:"memory_reserved"` // memoryReservationLockedToMax
	LatencySensitivity  string  `json:"latency_sensitivity"`
	AllowGuestMtuChange *bool   `json:"allow_guest_mtu_change,omitempty"` // of its SR-IOV adapter (none: absent)
	BootTime            float64 `json:"boot_time,omitempty"`              // output only: summary.runtime.bootTime (off: absent)
}

type DVSView struct {
	Name      string              `json:"name"`
	Portgroup string              `json:"portgroup"`
	MaxMtu    int                 `json:"max_mtu"`
	Members   map[string][]string `json:"members"` // host -> uplink vmnics (pnic backing)
}

// opt is a field of a partial update: set only when the JSON had it (null included).
type opt[T any] struct {
	Set bool
	V   T
}

func (o *opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	return json.Unmarshal(b, &o.V)
}

type HostPatch struct {
	BootTime        opt[float64]        `json:"boot_time"`
	BootCount       opt[int]            `json:"boot_count"`
	Connected       opt[bool]           `json:"connected"`
	MaintenanceMode opt[bool]           `json:"maintenance_mode"`
	PowerPolicy     opt[string]         `json:"power_policy"`
	PendingOther    opt[bool]           `json:"pending_other"`
	PFs             map[string]*PFPatch `json:"pfs"`
}

type PFPatch struct {
	Capable         opt[bool] `json:"capable"`
	MaxVFs          opt[int]  `json:"max_vfs"`
	HwVFs           opt[int]  `json:"hw_vfs"`
	Enabled         opt[bool] `json:"enabled"`
	Requested       opt[int]  `json:"requested"`
	ActiveEnabled   opt[bool] `json:"active_enabled"`
	ActiveRequested opt[int]  `json:"active_requested"`
}

type VMPatch struct {
	PoweredOn           opt[bool]    `json:"powered_on"`
	VfPF                opt[*string] `json:"vf_pf"`
	MemoryReserved      opt[bool]    `json:"memory_reserved"`
	LatencySensitivity  opt[string]  `json:"latency_sensitivity"`
	AllowGuestMtuChange opt[bool]    `json:"allow_guest_mtu_change"`
}

type Patch struct {
	RebootDelayS opt[float64]          `json:"reboot_delay_s"`
	Hosts        map[string]*HostPatch `json:"hosts"`
	VMs          map[string]*VMPatch   `json:"vms"`
	DVS          opt[*DVSView]         `json:"dvs"`
}

// ------------------------------------------------------------------------------ the lab state

// Power policies: vSphere's key and short name for each ESXi /Power/CpuPolicy value.
var powerPolicies = []struct {
	key   int32
	short string
	esxi  string
}{
	{1, "static", "High Performance"},
	{2, "dynamic", "Balanced"},
	{3, "low", "Low Power"},
	{4, "custom", "Custom"},
}

func policyByName(name string) (types.HostPowerPolicy, bool) {
	for _, p := range powerPolicies {
		if strings.EqualFold(p.esxi, name) {
			return policyInfo(p.key)
		}
	}
	return types.HostPowerPolicy{}, false
}

func policyInfo(key int32) (types.HostPowerPolicy, bool) {
	for _, p := range powerPolicies {
		if p.key == key {
			return types.HostPowerPolicy{
				Key:         p.key,
				Name:        "PowerPolicy." + p.short + ".name",
				ShortName:   p.short,
				Description: "PowerPolicy." + p.short + ".description",
			}, true
		}
	}
	return types.HostPowerPolicy{}, false
}

func policyName(key int32) string {
	for _, p := range powerPolicies {
		if p.key == key {
			return p.esxi
		}
	}
	return "Unknown"
}

type pfState struct {
	id string
	PFView
	info *types.HostSriovInfo // shared by host.config.pciPassthruInfo and the passthru system
}

// labHost is what the lab adds to a simulator HostSystem. Its mutable fields, the host and its
// two config managers are changed only while holding, in this order, the pci passthru system's,
// the power system's and the host's object locks (lockAll): one order, no deadlock.
type labHost struct {
	name     string
	hs       *simulator.HostSystem
	passthru *pciPassthruSystem
	power    *powerSystem
	pfs      []*pfState

	bootCount    int
	pendingOther bool
	rebootDelay  *time.Duration // this host's reboot takes this long (else the lab's delay)
	connected    bool
	rebooting    int // the reboot under way (0: none); a boot pushed by the world ends it
	reboots      int
}

type lab struct {
	client      *vim25.Client
	view        *View // the start state (names)
	hosts       map[string]*labHost
	hostsByRef  map[types.ManagedObjectReference]*labHost
	datacenter  *object.Datacenter
	folders     *object.DatacenterFolders
	pool        types.ManagedObjectReference
	dsDir       string
	hostProxy   *hostProxy
	dvsProxy    *dvsProxy
	folderProxy *folderProxy

	mu          sync.Mutex // guards rebootDelay and vmHost
	rebootDelay time.Duration
	updateMu    sync.Mutex // one /lab/update at a time
}

var theLab *lab

// changes counts property updates of the objects GET /lab/state shows (tasks too: their
// completion follows the direct changes stock vcsim makes inside them), so that a poller can ask
// "anything since N?" cheaply.
var changes atomic.Int64

var watched = map[string]bool{
	"HostSystem": true, "VirtualMachine": true, "DistributedVirtualSwitch": true,
	"DistributedVirtualPortgroup": true, "Task": true, "HostPciPassthruSystem": true, "HostPowerSystem": true,
}

type changeCounter struct {
	mo.ExtensibleManagedObject
}

func (c *changeCounter) PutObject(obj mo.Reference) {
	if watched[obj.Reference().Type] {
		changes.Add(1)
	}
}

func (c *changeCounter) UpdateObject(_ *simulator.Context, obj mo.Reference, _ []types.PropertyChange) {
	if watched[obj.Reference().Type] {
		changes.Add(1)
	}
}

func (c *changeCounter) RemoveObject(_ *simulator.Context, ref types.ManagedObjectReference) {
	if watched[ref.Type] {
		changes.Add(1)
	}
}

func (l *lab) delay() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rebootDelay
}

func (lh *labHost) pf(id string) *pfState {
	for _, pf := range lh.pfs {
		if pf.id == id {
			return pf
		}
	}
	return nil
}

func (lh *labHost) lockAll(ctx *simulator.Context, f func()) {
	ctx.WithLock(lh.passthru, func() {
		ctx.WithLock(lh.power, func() {
			ctx.WithLock(lh.hs, f)
		})
	})
}

// render recomputes what vSphere shows from the lab state; the caller holds the passthru
// system's and the host's locks.
func (lh *labHost) render(ctx *simulator.Context) {
	for _, pf := range lh.pfs {
		num := 0
		if pf.ActiveEnabled {
			num = min(pf.ActiveRequested, pf.HwVFs)
		}
		pf.NumVFs = num
		pf.Active = pf.ActiveEnabled && num > 0
		info := pf.info
		info.SriovCapable = pf.Capable
		info.SriovEnabled = pf.Enabled
		info.SriovActive = pf.Active
		info.NumVirtualFunctionRequested = int32(pf.Requested)
		info.NumVirtualFunction = int32(num)
		info.MaxVirtualFunctionSupported = int32(pf.MaxVFs)
	}
	lh.renderHost(ctx)
}

// renderHost: the host's own fields only; the caller holds the host lock.
func (lh *labHost) renderHost(ctx *simulator.Context) {
	state := types.HostSystemConnectionStateConnected
	if !lh.connected {
		state = types.HostSystemConnectionStateNotResponding
	}
	ctx.Update(lh.hs, []types.PropertyChange{
		{Name: "summary.rebootRequired", Val: lh.rebootRequired()},
		{Name: "runtime.connectionState", Val: state},
	})
}

func (lh *labHost) rebootRequired() bool {
	if lh.pendingOther {
		return true
	}
	for _, pf := range lh.pfs {
		if pf.Enabled != pf.ActiveEnabled || pf.Requested != pf.ActiveRequested {
			return true
		}
	}
	return false
}

func epoch(t float64) time.Time {
	sec, frac := math.Modf(t)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

func fromTime(t *time.Time) float64 {
	if t == nil {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

// startReboot takes the host down now and brings it back after the reboot delay with its
// pending configuration active. The caller holds the host lock.
func (l *lab) startReboot(ctx *simulator.Context, lh *labHost) {
	lh.reboots++
	reboot := lh.reboots
	lh.rebooting = reboot
	lh.connected = false
	lh.renderHost(ctx)
	delay := l.delay()
	if lh.rebootDelay != nil {
		delay = *lh.rebootDelay
	}
	go func() {
		time.Sleep(delay)
		ctx := simulator.SpoofContext()
		lh.lockAll(ctx, func() {
			if lh.rebooting != reboot { // the world booted the host meanwhile (POST /lab/update)
				return
			}
			now := time.Now().UTC()
			for _, pf := range lh.pfs {
				pf.ActiveEnabled = pf.Enabled
				pf.ActiveRequested = pf.Requested
			}
			lh.pendingOther = false
			lh.bootCount++
			lh.rebooting = 0
			lh.connected = true
			ctx.Update(lh.hs, []types.PropertyChange{{Name: "runtime.bootTime", Val: now}})
			lh.render(ctx)
		})
		log.Printf("%s: rebooted (boot %d)", lh.name, lh.bootCount)
	}()
}

// ------------------------------------------------------------------ objects stock vcsim lacks

// pciPassthruSystem is a host's HostPciPassthruSystem (stock vcsim has none: every host names a
// shared "ha-pcipassthrusystem" that does not exist).
type pciPassthruSystem struct {
	mo.HostPciPassthruSystem
	lh *labHost
}

func (p *pciPassthruSystem) Refresh(ctx *simulator.Context, req *types.Refresh) soap.HasFault {
	return &methods.RefreshBody{Res: &types.RefreshResponse{}}
}

func (p *pciPassthruSystem) UpdatePassthruConfig(ctx *simulator.Context, req *types.UpdatePassthruConfig) soap.HasFault {
	body := &methods.UpdatePassthruConfigBody{}
	lh := p.lh
	var fault *soap.Fault
	ctx.WithLock(lh.power, func() {
		ctx.WithLock(lh.hs, func() {
			if !lh.connected {
				fault = simulator.Fault(fmt.Sprintf("host %s is not responding", lh.name),
					&types.HostNotConnected{})
				return
			}
			// validate everything first: a bad entry changes nothing
			for _, c := range req.Config {
				base := c.GetHostPciPassthruConfig()
				pf := lh.pf(base.Id)
				if pf == nil {
					fault = simulator.Fault(fmt.Sprintf("no PCI device %q on host %s", base.Id, lh.name),
						&types.InvalidArgument{InvalidProperty: "config.id"})
					return
				}
				if s, ok := c.(*types.HostSriovConfig); ok {
					if s.NumVirtualFunction < 0 {
						fault = simulator.Fault("numVirtualFunction must not be negative",
							&types.InvalidArgument{InvalidProperty: "config.numVirtualFunction"})
						return
					}
					if s.SriovEnabled && !pf.Capable {
						fault = simulator.Fault(fmt.Sprintf("SR-IOV is not supported on PCI device %s of host %s "+
							"(sriovCapable is false: is SR-IOV enabled in the server BIOS?)", base.Id, lh.name),
							&types.NotSupported{})
						return
					}
				}
			}
			for _, c := range req.Config {
				if s, ok := c.(*types.HostSriovConfig); ok {
					pf := lh.pf(s.Id)
					pf.Enabled = s.SriovEnabled
					pf.Requested = int(s.NumVirtualFunction)
					if !s.SriovEnabled {
						pf.Requested = 0
					}
				}
			}
			lh.render(ctx)
		})
	})
	if fault != nil {
		body.Fault_ = fault
		return body
	}
	body.Res = &types.UpdatePassthruConfigResponse{}
	return body
}

// powerSystem is a host's HostPowerSystem (stock vcsim: a shared moref with no object behind it).
type powerSystem struct {
	mo.HostPowerSystem
	lh *labHost
}

func (p *powerSystem) ConfigurePowerPolicy(ctx *simulator.Context, req *types.ConfigurePowerPolicy) soap.HasFault {
	body := &methods.ConfigurePowerPolicyBody{}
	policy, ok := policyInfo(req.Key)
	if !ok {
		body.Fault_ = simulator.Fault(fmt.Sprintf("no power policy with key %d", req.Key),
			&types.InvalidArgument{InvalidProperty: "key"})
		return body
	}
	lh := p.lh
	ctx.WithLock(lh.hs, func() {
		if !lh.connected {
			body.Fault_ = simulator.Fault(fmt.Sprintf("host %s is not responding", lh.name), &types.HostNotConnected{})
			return
		}
		p.setPolicy(ctx, policy)
	})
	if body.Fault_ == nil {
		body.Res = &types.ConfigurePowerPolicyResponse{}
	}
	return body
}

// setPolicy: the caller holds the power system's and the host's locks.
func (p *powerSystem) setPolicy(ctx *simulator.Context, policy types.HostPowerPolicy) {
	p.Info.CurrentPolicy = policy
	ctx.Update(p.lh.hs, []types.PropertyChange{{Name: "config.powerSystemInfo.currentPolicy", Val: policy}})
}

// hostProxy receives HostSystem calls stock vcsim does not implement.
type hostProxy struct {
	mo.ExtensibleManagedObject
}

func (p *hostProxy) RebootHostTask(ctx *simulator.Context, req *types.RebootHost_Task) soap.HasFault {
	body := &methods.RebootHost_TaskBody{}
	lh := theLab.hostsByRef[req.This]
	if lh == nil {
		body.Fault_ = simulator.Fault("", &types.ManagedObjectNotFound{Obj: req.This})
		return body
	}
	var fault *soap.Fault
	ctx.WithLock(lh.hs, func() {
		switch {
		case !lh.connected:
			fault = simulator.Fault(fmt.Sprintf("host %s is not responding", lh.name), &types.HostNotConnected{})
		case !lh.hs.Runtime.InMaintenanceMode && !req.Force:
			fault = simulator.Fault(fmt.Sprintf("host %s is not in maintenance mode (enter it first, or force)", lh.name),
				&types.InvalidState{})
		}
	})
	if fault != nil {
		body.Fault_ = fault
		return body
	}
	task := simulator.CreateTask(lh.hs, "RebootHostTask", func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) {
		ctx.WithLock(lh.hs, func() { theLab.startReboot(ctx, lh) })
		return nil, nil
	})
	body.Res = &types.RebootHost_TaskResponse{Returnval: task.Run(ctx)}
	return body
}

// EnterMaintenanceModeTask as vCenter runs it on a host without DRS (vSphere Web Services API, HostSystem
// EnterMaintenanceMode_Task: "The task completes once there are no powered-on virtual machines on the host
// ... The operation does not directly initiate any operation to evacuate or power-down powered-on virtual
// machines"; its timeout: "The task completes when the host successfully enters maintenance mode or the
// timeout expires, and in the latter case the task contains a Timeout fault. If the timeout is less than or
// equal to zero, there is no timeout"). The task runs until the host's VMs are off; with a timeout it then
// fails (vim.fault.Timedout, the API's timeout fault type). No lock is held while it waits.
func (p *hostProxy) EnterMaintenanceModeTask(ctx *simulator.Context, req *types.EnterMaintenanceMode_Task) soap.HasFault {
	body := &methods.EnterMaintenanceMode_TaskBody{}
	lh := theLab.hostsByRef[req.This]
	if lh == nil {
		body.Fault_ = simulator.Fault("", &types.ManagedObjectNotFound{Obj: req.This})
		return body
	}
	var connected, inside bool
	readLocked(lh.hs, func() { connected, inside = lh.connected, lh.hs.Runtime.InMaintenanceMode })
	switch {
	case !connected:
		body.Fault_ = simulator.Fault(fmt.Sprintf("host %s is not responding", lh.name), &types.HostNotConnected{})
		return body
	case inside:
		body.Fault_ = simulator.Fault(fmt.Sprintf("host %s is already in maintenance mode", lh.name),
			&types.InvalidState{})
		return body
	}
	timedOut := false
	task := simulator.CreateTask(lh.hs, "enterMaintenanceMode", func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) {
		if timedOut {
			return nil, &types.Timedout{}
		}
		lh.hs.Runtime.InMaintenanceMode = true
		return nil, nil
	})
	if len(theLab.poweredOnVMs(ctx, lh)) == 0 {
		body.Res = &types.EnterMaintenanceMode_TaskResponse{Returnval: task.Run(ctx)}
		return body
	}
	ctx.Map.AtomicUpdate(ctx, task, []types.PropertyChange{
		{Name: "info.startTime", Val: time.Now()},
		{Name: "info.state", Val: types.TaskInfoStateRunning},
	})
	var deadline time.Time
	if req.Timeout > 0 {
		deadline = time.Now().Add(time.Duration(req.Timeout) * time.Second)
	}
	go func() {
		for {
			time.Sleep(50 * time.Millisecond)
			c := simulator.SpoofContext()
			if len(theLab.poweredOnVMs(c, lh)) == 0 {
				task.Run(c)
				return
			}
			if !deadline.IsZero() && time.Now().After(deadline) {
				timedOut = true
				task.Run(c)
				return
			}
		}
	}()
	body.Res = &types.EnterMaintenanceMode_TaskResponse{Returnval: task.Self}
	return body
}

// dvsProxy receives ReconfigureDvs_Task: stock vcsim keeps no member config (no pnic backing),
// ignores maxMtu and refuses edits.
type dvsProxy struct {
	mo.ExtensibleManagedObject
}

func (p *dvsProxy) ReconfigureDvsTask(ctx *simulator.Context, req *types.ReconfigureDvs_Task) soap.HasFault {
	body := &methods.ReconfigureDvs_TaskBody{}
	dvs, ok := ctx.Map.Get(req.This).(*simulator.DistributedVirtualSwitch)
	if !ok {
		body.Fault_ = simulator.Fault("", &types.ManagedObjectNotFound{Obj: req.This})
		return body
	}
	task := simulator.CreateTask(dvs, "ReconfigureDvsTask", func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) {
		return nil, reconfigureDvs(ctx, dvs, req.Spec)
	})
	body.Res = &types.ReconfigureDvs_TaskResponse{Returnval: task.Run(ctx)}
	return body
}

// folderProxy receives CreateDVS_Task: stock vcsim ignores the hosts of the spec.
type folderProxy struct {
	mo.ExtensibleManagedObject
}

func (p *folderProxy) CreateDVSTask(ctx *simulator.Context, req *types.CreateDVS_Task) soap.HasFault {
	folder, ok := ctx.Map.Get(req.This).(*simulator.Folder)
	if !ok {
		return &methods.CreateDVS_TaskBody{Fault_: simulator.Fault("", &types.ManagedObjectNotFound{Obj: req.This})}
	}
	spec := req.Spec.ConfigSpec.GetDVSConfigSpec()
	hosts := spec.Host
	spec.Host = nil
	inner := folder.CreateDVSTask(ctx, req).(*methods.CreateDVS_TaskBody)
	if inner.Fault_ != nil || len(hosts) == 0 {
		return inner
	}
	innerRef := inner.Res.Returnval
	task := simulator.CreateTask(folder, "CreateDVSTask", func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) {
		created := ctx.Map.Get(innerRef).(*simulator.Task)
		created.Wait()
		if created.Info.Error != nil {
			return nil, created.Info.Error.Fault
		}
		ref := created.Info.Result.(types.ManagedObjectReference)
		dvs := ctx.Map.Get(ref).(*simulator.DistributedVirtualSwitch)
		var fault types.BaseMethodFault
		ctx.WithLock(dvs, func() {
			fault = reconfigureDvs(ctx, dvs, &types.DVSConfigSpec{Host: hosts})
		})
		return ref, fault
	})
	return &methods.CreateDVS_TaskBody{Res: &types.CreateDVS_TaskResponse{Returnval: task.Run(ctx)}}
}

// reconfigureDvs applies a DVS config spec: maxMtu, and host members with their pnic backing.
// The caller holds the DVS lock; like stock vcsim, related objects are updated without theirs.
func reconfigureDvs(ctx *simulator.Context, s *simulator.DistributedVirtualSwitch, base types.BaseDVSConfigSpec) types.BaseMethodFault {
	spec := base.GetDVSConfigSpec()
	cfg, ok := s.Config.(*types.VMwareDVSConfigInfo)
	if !ok {
		return &types.NotSupported{}
	}
	if spec.ConfigVersion != "" && spec.ConfigVersion != cfg.ConfigVersion {
		return &types.ConcurrentAccess{}
	}
	newCfg := *cfg
	newCfg.Host = append([]types.DistributedVirtualSwitchHostMember(nil), cfg.Host...)
	members := append([]types.ManagedObjectReference(nil), s.Summary.HostMember...)
	if v, ok := base.(*types.VMwareDVSConfigSpec); ok && v.MaxMtu != 0 {
		if v.MaxMtu < 1280 || v.MaxMtu > 9000 {
			return &types.InvalidArgument{InvalidProperty: "maxMtu"}
		}
		newCfg.MaxMtu = v.MaxMtu
	}
	memberIndex := func(ref types.ManagedObjectReference) int {
		for i, m := range newCfg.Host {
			if m.Config.Host != nil && *m.Config.Host == ref {
				return i
			}
		}
		return -1
	}
	for _, member := range spec.Host {
		host, ok := ctx.Map.Get(member.Host).(*simulator.HostSystem)
		if !ok {
			return &types.ManagedObjectNotFound{Obj: member.Host}
		}
		if fault := checkBacking(host, member.Backing); fault != nil {
			return fault
		}
		ref := host.Self
		switch types.ConfigSpecOperation(member.Operation) {
		case types.ConfigSpecOperationAdd:
			if simulator.FindReference(members, ref) != nil {
				return &types.AlreadyExists{Name: host.Name}
			}
			backing := member.Backing
			if backing == nil {
				backing = &types.DistributedVirtualSwitchHostMemberPnicBacking{}
			}
			newCfg.Host = append(newCfg.Host, types.DistributedVirtualSwitchHostMember{
				Config: types.DistributedVirtualSwitchHostMemberConfigInfo{
					Host:                &ref,
					MaxProxySwitchPorts: max(member.MaxProxySwitchPorts, 512),
					Backing:             backing,
				},
				ProductInfo: s.Summary.ProductInfo,
				Status:      "up",
			})
			members = append(members, ref)
			ctx.Update(host, []types.PropertyChange{{Name: "network", Val: appendMissing(host.Network, s.Portgroup...)}})
			for _, pgRef := range s.Portgroup {
				if pg, ok := ctx.Map.Get(pgRef).(*simulator.DistributedVirtualPortgroup); ok {
					ctx.Update(pg, []types.PropertyChange{{Name: "host", Val: appendMissing(pg.Host, ref)}})
				}
			}
			if parent, ok := ctx.Map.Get(*host.Parent).(*simulator.ClusterComputeResource); ok {
				ctx.Update(parent, []types.PropertyChange{{Name: "network", Val: appendMissing(parent.Network, s.Portgroup...)}})
			}
		case types.ConfigSpecOperationEdit:
			i := memberIndex(ref)
			if i < 0 {
				return &types.NotFound{}
			}
			if member.Backing != nil {
				newCfg.Host[i].Config.Backing = member.Backing
			}
			if member.MaxProxySwitchPorts != 0 {
				newCfg.Host[i].Config.MaxProxySwitchPorts = member.MaxProxySwitchPorts
			}
		case types.ConfigSpecOperationRemove:
			i := memberIndex(ref)
			if i < 0 {
				return &types.NotFound{}
			}
			for _, vmRef := range host.Vm {
				if vm, ok := ctx.Map.Get(vmRef).(*simulator.VirtualMachine); ok {
					if pg := onSwitch(vm, s); pg != "" {
						return &types.ResourceInUse{Type: "DistributedVirtualPortgroup", Name: pg}
					}
				}
			}
			newCfg.Host = append(newCfg.Host[:i], newCfg.Host[i+1:]...)
			simulator.RemoveReference(&members, ref)
			network := append([]types.ManagedObjectReference(nil), host.Network...)
			for _, pgRef := range s.Portgroup {
				simulator.RemoveReference(&network, pgRef)
				if pg, ok := ctx.Map.Get(pgRef).(*simulator.DistributedVirtualPortgroup); ok {
					pgHosts := append([]types.ManagedObjectReference(nil), pg.Host...)
					simulator.RemoveReference(&pgHosts, ref)
					ctx.Update(pg, []types.PropertyChange{{Name: "host", Val: pgHosts}})
				}
			}
			ctx.Update(host, []types.PropertyChange{{Name: "network", Val: network}})
		default:
			return &types.InvalidArgument{InvalidProperty: "host.operation"}
		}
	}
	version, _ := strconv.Atoi(cfg.ConfigVersion)
	newCfg.ConfigVersion = strconv.Itoa(version + 1)
	ctx.Update(s, []types.PropertyChange{
		{Name: "config", Val: &newCfg},
		{Name: "summary.hostMember", Val: members},
	})
	return nil
}

// onSwitch: the key of a portgroup of switch s one of the VM's network adapters is on, or "".
func onSwitch(vm *simulator.VirtualMachine, s *simulator.DistributedVirtualSwitch) string {
	for _, d := range vm.Config.Hardware.Device {
		card, ok := d.(types.BaseVirtualEthernetCard)
		if !ok {
			continue
		}
		if b, ok := card.GetVirtualEthernetCard().Backing.(*types.VirtualEthernetCardDistributedVirtualPortBackingInfo); ok &&
			b.Port.SwitchUuid == s.Uuid {
			return b.Port.PortgroupKey
		}
	}
	return ""
}

func checkBacking(host *simulator.HostSystem, backing types.BaseDistributedVirtualSwitchHostMemberBacking) types.BaseMethodFault {
	pnic, ok := backing.(*types.DistributedVirtualSwitchHostMemberPnicBacking)
	if !ok || pnic == nil {
		return nil
	}
	for _, spec := range pnic.PnicSpec {
		found := false
		for _, p := range host.Config.Network.Pnic {
			if p.Device == spec.PnicDevice {
				found = true
				break
			}
		}
		if !found {
			return &types.InvalidArgument{InvalidProperty: "host.backing.pnicSpec.pnicDevice"}
		}
	}
	return nil
}

func appendMissing(refs []types.ManagedObjectReference, add ...types.ManagedObjectReference) []types.ManagedObjectReference {
	out := append([]types.ManagedObjectReference(nil), refs...)
	for _, r := range add {
		if simulator.FindReference(out, r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// ------------------------------------------------------------------ vetting calls (Handler)

// internal: the lab's own in-process client (and SpoofContext) have no user name.
func internal(ctx *simulator.Context) bool {
	return ctx.Session == nil || ctx.Session.UserName == ""
}

func handler(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
	l := theLab
	switch m.Name {
	case "RebootHost_Task":
		if _, ok := l.hostsByRef[m.This]; ok {
			m.This = l.hostProxy.Self
			return l.hostProxy, nil
		}
	case "ReconfigureDvs_Task":
		if m.This.Type == "DistributedVirtualSwitch" {
			m.This = l.dvsProxy.Self
			return l.dvsProxy, nil
		}
	case "CreateDVS_Task":
		if m.This.Type == "Folder" {
			m.This = l.folderProxy.Self
			return l.folderProxy, nil
		}
	case "ReconfigVM_Task":
		if req, ok := m.Body.(*types.ReconfigVM_Task); ok {
			return nil, l.vetReconfig(ctx, req)
		}
	case "PowerOnVM_Task":
		if req, ok := m.Body.(*types.PowerOnVM_Task); ok && !internal(ctx) {
			return nil, l.vetPowerOn(ctx, req.This)
		}
	case "EnterMaintenanceMode_Task":
		if _, ok := l.hostsByRef[m.This]; ok && !internal(ctx) {
			m.This = l.hostProxy.Self
			return l.hostProxy, nil
		}
	}
	return nil, nil
}

// withMessage: a fault whose faultMessage says why (the handler's faults carry no faultstring).
func withMessage(fault types.BaseMethodFault, msg string) types.BaseMethodFault {
	fault.GetMethodFault().FaultMessage = []types.LocalizableMessage{{Key: "com.roce-wizard.lab", Message: msg}}
	return fault
}

// poweredOnVMs: the names of the host's powered-on VMs.
func (l *lab) poweredOnVMs(ctx *simulator.Context, lh *labHost) []string {
	var refs []types.ManagedObjectReference
	readLocked(lh.hs, func() { refs = append(refs, lh.hs.Vm...) })
	var names []string
	for _, ref := range refs {
		if vm, ok := ctx.Map.Get(ref).(*simulator.VirtualMachine); ok {
			ctx.WithLock(vm, func() {
				if vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
					names = append(names, vm.Name)
				}
			})
		}
	}
	sort.Strings(names)
	return names
}


func sriovCards(devices object.VirtualDeviceList) []*types.VirtualSriovEthernetCard {
	var out []*types.VirtualSriovEthernetCard
	for _, d := range devices {
		if c, ok := d.(*types.VirtualSriovEthernetCard); ok {
			out = append(out, c)
		}
	}
	return out
}

func pfID(c *types.VirtualSriovEthernetCard) string {
	if c.SriovBacking == nil || c.SriovBacking.PhysicalFunctionBacking == nil {
		return ""
	}
	return c.SriovBacking.PhysicalFunctionBacking.Id
}

func (l *lab) hostOfVM(vm *simulator.VirtualMachine) *labHost {
	if vm.Runtime.Host == nil {
		return nil
	}
	return l.hostsByRef[*vm.Runtime.Host]
}

// vetReconfig: memoryReservationLockedToMax sets the reservation (vCenter does; stock vcsim does
// not), SR-IOV adapters change only while the VM is off, and their PF backing is completed.
func (l *lab) vetReconfig(ctx *simulator.Context, req *types.ReconfigVM_Task) types.BaseMethodFault {
	vm, ok := ctx.Map.Get(req.This).(*simulator.VirtualMachine)
	if !ok {
		return nil
	}
	var fault types.BaseMethodFault
	ctx.WithLock(vm, func() {
		spec := &req.Spec
		memory := int64(vm.Config.Hardware.MemoryMB)
		if spec.MemoryMB != 0 {
			memory = spec.MemoryMB
		}
		if spec.MemoryReservationLockedToMax != nil && *spec.MemoryReservationLockedToMax {
			alloc := types.ResourceAllocationInfo{}
			if vm.Config.MemoryAllocation != nil {
				alloc = *vm.Config.MemoryAllocation
			}
			if spec.MemoryAllocation != nil {
				if spec.MemoryAllocation.Limit != nil {
					alloc.Limit = spec.MemoryAllocation.Limit
				}
				if spec.MemoryAllocation.Shares != nil {
					alloc.Shares = spec.MemoryAllocation.Shares
				}
			}
			alloc.Reservation = types.NewInt64(memory)
			alloc.OverheadLimit = nil
			spec.MemoryAllocation = &alloc
		}
		lh := l.hostOfVM(vm)
		for _, change := range spec.DeviceChange {
			dc := change.GetVirtualDeviceConfigSpec()
			card, ok := dc.Device.(*types.VirtualSriovEthernetCard)
			if !ok {
				continue
			}
			if !internal(ctx) && vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
				fault = &types.InvalidPowerState{
					RequestedState: types.VirtualMachinePowerStatePoweredOff,
					ExistingState:  vm.Runtime.PowerState,
				}
				return
			}
			if dc.Operation != types.VirtualDeviceConfigSpecOperationAdd && dc.Operation != types.VirtualDeviceConfigSpecOperationEdit {
				continue
			}
			id := pfID(card)
			if lh == nil || id == "" || lh.pf(id) == nil {
				fault = &types.InvalidDeviceSpec{
					InvalidVmConfig: types.InvalidVmConfig{Property: "sriovBacking.physicalFunctionBacking.id"},
					DeviceIndex:     0,
				}
				return
			}
			pf := lh.pf(id)
			b := card.SriovBacking.PhysicalFunctionBacking
			if b.DeviceId == "" {
				b.DeviceId = pf.DeviceID
			}
			if b.VendorId == 0 {
				b.VendorId = 0x15b3
			}
			if b.SystemId == "" {
				b.SystemId = lh.hs.Hardware.SystemInfo.Uuid
			}
			if b.DeviceName == "" {
				b.DeviceName = pf.DeviceName
			}
			if card.DeviceInfo == nil {
				card.DeviceInfo = &types.Description{Label: "SR-IOV network adapter", Summary: id}
			}
		}
	})
	return fault
}

// vetPowerOn: a VM with a passthrough VF needs all its memory reserved, and a VF on its PF.
func (l *lab) vetPowerOn(ctx *simulator.Context, ref types.ManagedObjectReference) types.BaseMethodFault {
	vm, ok := ctx.Map.Get(ref).(*simulator.VirtualMachine)
	if !ok {
		return nil
	}
	var cards []*types.VirtualSriovEthernetCard
	var reserved bool
	var memory int32
	var lh *labHost
	var vmName string
	ctx.WithLock(vm, func() {
		vmName = vm.Name
		cards = sriovCards(object.VirtualDeviceList(vm.Config.Hardware.Device))
		memory = vm.Config.Hardware.MemoryMB
		a := vm.Config.MemoryAllocation
		reserved = a != nil && a.Reservation != nil && *a.Reservation >= int64(memory)
		lh = l.hostOfVM(vm)
	})
	if lh != nil {
		var inside, down bool
		readLocked(lh.hs, func() { inside, down = lh.hs.Runtime.InMaintenanceMode, !lh.connected && lh.rebooting != 0 })
		if down { // rebooting and not back: "not allowed in the current connection state of the host"
			return withMessage(&types.HostNotConnected{}, fmt.Sprintf(
				"host %s is not responding: VM %s cannot power on there", lh.name, vmName))
		}
		if inside {
			return withMessage(&types.InvalidState{}, fmt.Sprintf(
				"host %s is in maintenance mode: no VM powers on there", lh.name))
		}
	}
	if len(cards) == 0 || lh == nil {
		return nil
	}
	if !reserved {
		return &types.InvalidVmConfig{Property: fmt.Sprintf(
			"Invalid memory setting: memory reservation (sched.mem.min) should be equal to memsize(%d)", memory)}
	}
	// VFs in use on each PF by the host's other powered-on VMs
	used := map[string]int{}
	var others []types.ManagedObjectReference
	readLocked(lh.hs, func() { others = append(others, lh.hs.Vm...) })
	for _, other := range others {
		if other == ref {
			continue
		}
		if o, ok := ctx.Map.Get(other).(*simulator.VirtualMachine); ok {
			ctx.WithLock(o, func() {
				if o.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
					for _, c := range sriovCards(object.VirtualDeviceList(o.Config.Hardware.Device)) {
						used[pfID(c)]++
					}
				}
			})
		}
	}
	var fault types.BaseMethodFault
	lh.lockAll(ctx, func() {
		for _, c := range cards {
			id := pfID(c)
			pf := lh.pf(id)
			if pf == nil || !pf.Active || used[id] >= pf.NumVFs {
				fault = &types.InsufficientResourcesFault{}
				return
			}
			used[id]++
		}
	})
	return fault
}

// ------------------------------------------------------------------------------ building

// waitTask waits for a task of the in-process client by reading the simulator's task object:
// object.Task.Wait goes through the property collector, which batches updates every 20 ms.
func waitTask(task *object.Task, err error) (types.AnyType, error) {
	if err != nil {
		return nil, err
	}
	t, ok := simulator.Map.Get(task.Reference()).(*simulator.Task)
	if !ok {
		return nil, fmt.Errorf("no task %s", task.Reference())
	}
	ctx := &simulator.Context{}
	for pause := 50 * time.Microsecond; ; pause = min(2*pause, 5*time.Millisecond) {
		var info types.TaskInfo
		simulator.Map.WithLock(ctx, t, func() { info = t.Info })
		switch info.State {
		case types.TaskInfoStateSuccess:
			return info.Result, nil
		case types.TaskInfoStateError:
			if info.Error != nil {
				return nil, fmt.Errorf("%s: %T %s", info.Name, info.Error.Fault, info.Error.LocalizedMessage)
			}
			return nil, fmt.Errorf("%s failed", info.Name)
		}
		time.Sleep(pause)
	}
}

func check(err error, what string) {
	if err != nil {
		log.Fatalf("%s: %v", what, err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func build(ctx context.Context, model *simulator.Model, view *View, dsDir string) *lab {
	client, err := vim25.NewClient(ctx, model.Service)
	check(err, "in-process client")
	l := &lab{
		client:      client,
		view:        view,
		hosts:       map[string]*labHost{},
		hostsByRef:  map[types.ManagedObjectReference]*labHost{},
		dsDir:       dsDir,
		rebootDelay: time.Duration(view.RebootDelayS * float64(time.Second)),
	}
	theLab = l
	put := func(obj mo.Reference, kind, value string) {
		reflectSelf(obj, types.ManagedObjectReference{Type: kind, Value: value})
		simulator.Map.Put(obj)
	}
	l.hostProxy = &hostProxy{}
	put(l.hostProxy, "LabHostSystemProxy", "lab-host-proxy")
	l.dvsProxy = &dvsProxy{}
	put(l.dvsProxy, "LabDvsProxy", "lab-dvs-proxy")
	l.folderProxy = &folderProxy{}
	put(l.folderProxy, "LabFolderProxy", "lab-folder-proxy")
	simulator.Map.Handler = handler
	counter := &changeCounter{}
	counter.Self = types.ManagedObjectReference{Type: "LabChangeCounter", Value: "lab-changes"}
	simulator.Map.AddHandler(counter)

	root := object.NewRootFolder(client)
	l.datacenter, err = root.CreateDatacenter(ctx, view.Datacenter)
	check(err, "create datacenter")
	l.folders, err = l.datacenter.Folders(ctx)
	check(err, "datacenter folders")
	cluster, err := l.folders.HostFolder.CreateCluster(ctx, view.Cluster, types.ClusterConfigSpecEx{})
	check(err, "create cluster")
	pool, err := cluster.ResourcePool(ctx)
	check(err, "cluster resource pool")
	l.pool = pool.Reference()

	for _, name := range sortedKeys(view.Hosts) {
		hv := view.Hosts[name]
		task, err := cluster.AddHost(ctx, types.HostConnectSpec{HostName: name}, true, nil, nil)
		check(err, "add host "+name)
		result, err := waitTask(task, err)
		check(err, "add host "+name)
		ref := result.(types.ManagedObjectReference)
		l.addHost(name, simulator.Map.Get(ref).(*simulator.HostSystem), hv)
		dss, err := object.NewHostSystem(client, ref).ConfigManager().DatastoreSystem(ctx)
		check(err, "datastore system of "+name)
		_, err = dss.CreateLocalDatastore(ctx, view.Datastore, dsDir)
		check(err, "datastore on "+name)
	}
	if view.DVS != nil {
		check(l.applyDVS(ctx, view.DVS), "distributed switch")
	}
	for _, name := range sortedKeys(view.VMs) {
		check(l.createVM(ctx, name, view.VMs[name]), "create VM "+name)
	}
	return l
}

// reflectSelf sets the Self of an object embedding an mo type.
func reflectSelf(obj mo.Reference, ref types.ManagedObjectReference) {
	switch o := obj.(type) {
	case *hostProxy:
		o.Self = ref
	case *dvsProxy:
		o.Self = ref
	case *folderProxy:
		o.Self = ref
	case *pciPassthruSystem:
		o.Self = ref
	case *powerSystem:
		o.Self = ref
	default:
		panic(fmt.Sprintf("reflectSelf: %T", obj))
	}
}

func (l *lab) addHost(name string, hs *simulator.HostSystem, hv *HostView) {
	lh := &labHost{name: name, hs: hs, bootCount: hv.BootCount, pendingOther: hv.PendingOther, connected: hv.Connected}
	if hv.RebootDelayS != nil {
		d := time.Duration(*hv.RebootDelayS * float64(time.Second))
		lh.rebootDelay = &d
	}
	if lh.bootCount == 0 {
		lh.bootCount = 1
	}
	// physical NICs: the template's entry, renamed per the world
	if len(hv.Pnics) > 0 {
		template := hs.Config.Network.Pnic[0]
		var pnics []types.PhysicalNic
		for _, p := range hv.Pnics {
			nic := template
			nic.Key = "key-vim.host.PhysicalNic-" + p.Device
			nic.Device = p.Device
			nic.Pci = p.PCI
			nic.Driver = p.Driver
			nic.Mac = p.MAC
			nic.LinkSpeed = &types.PhysicalNicLinkInfo{SpeedMb: int32(p.SpeedMbps), Duplex: true}
			nic.ValidLinkSpecification = []types.PhysicalNicLinkInfo{{SpeedMb: int32(p.SpeedMbps), Duplex: true}}
			pnics = append(pnics, nic)
		}
		hs.Config.Network.Pnic = pnics
	}
	// PCI devices and their passthrough info
	devices := append([]types.HostPciDevice(nil), hs.Hardware.PciDevice...)
	var infos []types.BaseHostPciPassthruInfo
	for _, id := range sortedKeys(hv.PFs) {
		pv := hv.PFs[id]
		pf := &pfState{id: id, PFView: *pv}
		pf.info = &types.HostSriovInfo{HostPciPassthruInfo: types.HostPciPassthruInfo{
			Id: id, DependentDevice: id, PassthruCapable: true,
		}}
		lh.pfs = append(lh.pfs, pf)
		infos = append(infos, pf.info)
		var bus, slot, fn int
		fmt.Sscanf(id, "0000:%x:%x.%x", &bus, &slot, &fn)
		deviceID, _ := strconv.ParseUint(pv.DeviceID, 16, 16)
		devices = append(devices, types.HostPciDevice{
			Id: id, ClassId: 0x0200, Bus: byte(bus), Slot: byte(slot), Function: byte(fn),
			VendorId: 0x15b3, SubVendorId: 0x15b3, VendorName: "Mellanox Technologies",
			DeviceId: int16(deviceID), SubDeviceId: 0x0008, DeviceName: pv.DeviceName,
		})
	}
	hs.Hardware.PciDevice = devices
	hs.Config.PciPassthruInfo = infos

	lh.passthru = &pciPassthruSystem{lh: lh}
	lh.passthru.PciPassthruInfo = infos
	reflectSelf(lh.passthru, types.ManagedObjectReference{Type: "HostPciPassthruSystem", Value: "pcipassthru-" + hs.Self.Value})
	simulator.Map.Put(lh.passthru)
	passthruRef := lh.passthru.Self
	hs.ConfigManager.PciPassthruSystem = &passthruRef

	lh.power = &powerSystem{lh: lh}
	if hs.Config.PowerSystemCapability != nil {
		lh.power.Capability = *hs.Config.PowerSystemCapability
	}
	reflectSelf(lh.power, types.ManagedObjectReference{Type: "HostPowerSystem", Value: "powersystem-" + hs.Self.Value})
	simulator.Map.Put(lh.power)
	powerRef := lh.power.Self
	hs.ConfigManager.PowerSystem = &powerRef
	info := *hs.Config.PowerSystemInfo
	hs.Config.PowerSystemInfo = &info
	policy, ok := policyByName(hv.PowerPolicy)
	if !ok {
		policy, _ = policyInfo(2)
	}

	ctx := simulator.SpoofContext()
	lh.lockAll(ctx, func() {
		lh.power.setPolicy(ctx, policy)
		boot := epoch(hv.BootTime)
		if hv.BootTime == 0 {
			boot = time.Now().UTC()
		}
		hs.Runtime.InMaintenanceMode = hv.MaintenanceMode
		ctx.Update(hs, []types.PropertyChange{{Name: "runtime.bootTime", Val: boot}})
		lh.render(ctx)
	})
	l.hosts[name] = lh
	l.hostsByRef[hs.Self] = lh
}

// readLocked reads a simulator object under its lock (tasks change objects in goroutines).
func readLocked(obj mo.Reference, f func()) {
	simulator.Map.WithLock(&simulator.Context{}, obj, f)
}

type pgInfo struct{ name, key string }

// dvsInfo is what the lab reads of a distributed switch, copied under the objects' locks.
type dvsInfo struct {
	s       *simulator.DistributedVirtualSwitch
	name    string
	uuid    string
	members []types.ManagedObjectReference
	hosts   []types.DistributedVirtualSwitchHostMember
	maxMtu  int32
	pgs     []pgInfo // its portgroups but the uplinks', by name
}

func readDVS(s *simulator.DistributedVirtualSwitch) *dvsInfo {
	d := &dvsInfo{s: s}
	var refs []types.ManagedObjectReference
	readLocked(s, func() {
		d.name, d.uuid = s.Name, s.Uuid
		d.members = append(d.members, s.Summary.HostMember...)
		refs = append(refs, s.Portgroup...)
		if cfg, ok := s.Config.(*types.VMwareDVSConfigInfo); ok {
			d.maxMtu = cfg.MaxMtu
			d.hosts = append(d.hosts, cfg.Host...)
		}
	})
	for _, ref := range refs {
		if pg, ok := simulator.Map.Get(ref).(*simulator.DistributedVirtualPortgroup); ok {
			readLocked(pg, func() {
				if !strings.HasPrefix(pg.Name, d.name+"-DVUplinks") {
					d.pgs = append(d.pgs, pgInfo{pg.Name, pg.Key})
				}
			})
		}
	}
	sort.Slice(d.pgs, func(i, j int) bool { return d.pgs[i].name < d.pgs[j].name })
	return d
}

// portgroup: by name, or the first one for "".
func (d *dvsInfo) portgroup(name string) *pgInfo {
	for i := range d.pgs {
		if name == "" || d.pgs[i].name == name {
			return &d.pgs[i]
		}
	}
	return nil
}

// theDVS: the lab's distributed switch (the first by name), or nil.
func (l *lab) theDVS() *dvsInfo {
	var found []*dvsInfo
	for _, e := range simulator.Map.All("DistributedVirtualSwitch") {
		if s, ok := e.(*simulator.DistributedVirtualSwitch); ok {
			found = append(found, readDVS(s))
		}
	}
	if len(found) == 0 {
		return nil
	}
	sort.Slice(found, func(i, j int) bool { return found[i].name < found[j].name })
	return found[0]
}

func pnicBacking(vmnics []string) *types.DistributedVirtualSwitchHostMemberPnicBacking {
	b := &types.DistributedVirtualSwitchHostMemberPnicBacking{}
	for _, n := range vmnics {
		b.PnicSpec = append(b.PnicSpec, types.DistributedVirtualSwitchHostMemberPnicSpec{PnicDevice: n})
	}
	return b
}

// applyDVS makes the distributed switch what the view says, through the vSphere API (in process).
func (l *lab) applyDVS(ctx context.Context, want *DVSView) error {
	d := l.theDVS()
	if want == nil {
		if d == nil {
			return nil
		}
		if err := l.rebackVFs(ctx, nil, true); err != nil {
			return err
		}
		_, err := waitTask(object.NewDistributedVirtualSwitch(l.client, d.s.Self).Destroy(ctx))
		return err
	}
	if d != nil && d.name != want.Name {
		return fmt.Errorf("the lab has distributed switch %q, not %q", d.name, want.Name)
	}
	if d == nil {
		spec := types.DVSCreateSpec{ConfigSpec: &types.VMwareDVSConfigSpec{
			DVSConfigSpec: types.DVSConfigSpec{Name: want.Name},
			MaxMtu:        int32(want.MaxMtu),
		}}
		result, err := waitTask(l.folders.NetworkFolder.CreateDVS(ctx, spec))
		if err != nil {
			return err
		}
		d = readDVS(simulator.Map.Get(result.(types.ManagedObjectReference)).(*simulator.DistributedVirtualSwitch))
	}
	dvs := object.NewDistributedVirtualSwitch(l.client, d.s.Self)
	if want.Portgroup != "" && d.portgroup(want.Portgroup) == nil {
		_, err := waitTask(dvs.AddPortgroup(ctx, []types.DVPortgroupConfigSpec{{
			Name: want.Portgroup, Type: string(types.DistributedVirtualPortgroupPortgroupTypeEarlyBinding), NumPorts: 128,
		}}))
		if err != nil {
			return err
		}
	}
	spec := &types.VMwareDVSConfigSpec{MaxMtu: int32(want.MaxMtu)}
	current := map[string][]string{}
	for _, m := range d.hosts {
		if lh := l.hostsByRef[*m.Config.Host]; lh != nil {
			current[lh.name] = memberPnics(m)
		}
	}
	for _, name := range sortedKeys(want.Members) {
		lh := l.hosts[name]
		if lh == nil {
			return fmt.Errorf("DVS member %q is not a host of the lab", name)
		}
		op := types.ConfigSpecOperationAdd
		if have, ok := current[name]; ok {
			if strings.Join(have, ",") == strings.Join(want.Members[name], ",") {
				continue
			}
			op = types.ConfigSpecOperationEdit
		}
		spec.Host = append(spec.Host, types.DistributedVirtualSwitchHostMemberConfigSpec{
			Operation: string(op), Host: lh.hs.Self, Backing: pnicBacking(want.Members[name]),
		})
	}
	leaving := map[types.ManagedObjectReference]bool{}
	for name := range current {
		if _, ok := want.Members[name]; !ok {
			leaving[l.hosts[name].hs.Self] = true
			spec.Host = append(spec.Host, types.DistributedVirtualSwitchHostMemberConfigSpec{
				Operation: string(types.ConfigSpecOperationRemove), Host: l.hosts[name].hs.Self,
			})
		}
	}
	if len(spec.Host) == 0 && d.maxMtu == spec.MaxMtu {
		return nil
	}
	if len(leaving) > 0 { // their VMs' VFs leave the switch first (vCenter refuses otherwise)
		if err := l.rebackVFs(ctx, leaving, false); err != nil {
			return err
		}
	}
	if _, err := waitTask(dvs.Reconfigure(ctx, spec)); err != nil {
		return err
	}
	return l.rebackVFs(ctx, nil, false)
}

// rebackVFs puts every SR-IOV adapter on the port group its host can offer: the lab's DVS
// portgroup when the host is a member (and not leaving, nor the switch going), else VM Network.
func (l *lab) rebackVFs(ctx context.Context, leaving map[types.ManagedObjectReference]bool, switchGoing bool) error {
	for _, e := range simulator.Map.All("VirtualMachine") {
		svm := e.(*simulator.VirtualMachine)
		var lh *labHost
		var cards []*types.VirtualSriovEthernetCard
		simulator.SpoofContext().WithLock(svm, func() {
			lh = l.hostOfVM(svm)
			cards = sriovCards(object.VirtualDeviceList(svm.Config.Hardware.Device))
		})
		if lh == nil {
			continue
		}
		var changes []types.BaseVirtualDeviceConfigSpec
		for _, card := range cards {
			want := l.vfBacking(lh, leaving[lh.hs.Self] || switchGoing)
			if sameBacking(card.Backing, want) {
				continue
			}
			edited := *card
			edited.Backing = want
			changes = append(changes, &types.VirtualDeviceConfigSpec{
				Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: &edited,
			})
		}
		if len(changes) == 0 {
			continue
		}
		_, err := waitTask(object.NewVirtualMachine(l.client, svm.Self).Reconfigure(ctx,
			types.VirtualMachineConfigSpec{DeviceChange: changes}))
		if err != nil {
			return fmt.Errorf("moving %s's VF: %w", svm.Name, err)
		}
	}
	return nil
}

func sameBacking(a, b types.BaseVirtualDeviceBackingInfo) bool {
	switch x := a.(type) {
	case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
		y, ok := b.(*types.VirtualEthernetCardDistributedVirtualPortBackingInfo)
		return ok && x.Port.SwitchUuid == y.Port.SwitchUuid && x.Port.PortgroupKey == y.Port.PortgroupKey
	case *types.VirtualEthernetCardNetworkBackingInfo:
		y, ok := b.(*types.VirtualEthernetCardNetworkBackingInfo)
		return ok && x.DeviceName == y.DeviceName
	}
	return false
}

func memberPnics(m types.DistributedVirtualSwitchHostMember) []string {
	var out []string
	if b, ok := m.Config.Backing.(*types.DistributedVirtualSwitchHostMemberPnicBacking); ok {
		for _, p := range b.PnicSpec {
			out = append(out, p.PnicDevice)
		}
	}
	return out
}

// vfBacking: the lab's DVS portgroup when the host is a member (and not leaving), else the
// host's standard "VM Network".
func (l *lab) vfBacking(lh *labHost, leaving bool) types.BaseVirtualDeviceBackingInfo {
	if d := l.theDVS(); d != nil && !leaving && simulator.FindReference(d.members, lh.hs.Self) != nil {
		name := ""
		if l.view.DVS != nil {
			name = l.view.DVS.Portgroup
		}
		pg := d.portgroup(name)
		if pg == nil {
			pg = d.portgroup("")
		}
		if pg != nil {
			return &types.VirtualEthernetCardDistributedVirtualPortBackingInfo{
				Port: types.DistributedVirtualSwitchPortConnection{SwitchUuid: d.uuid, PortgroupKey: pg.key},
			}
		}
	}
	return &types.VirtualEthernetCardNetworkBackingInfo{
		VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: "VM Network"},
	}
}

// sriovCard builds a VM's SR-IOV adapter: on the lab's DVS portgroup when its host is a member,
// else on the host's standard "VM Network" (a VF needs a port group of some kind).
func (l *lab) sriovCard(lh *labHost, pfID string) (*types.VirtualSriovEthernetCard, error) {
	pf := lh.pf(pfID)
	if pf == nil {
		return nil, fmt.Errorf("host %s has no PF %s", lh.name, pfID)
	}
	backing := l.vfBacking(lh, false)
	return &types.VirtualSriovEthernetCard{
		VirtualEthernetCard: types.VirtualEthernetCard{
			VirtualDevice: types.VirtualDevice{
				DeviceInfo: &types.Description{Label: "SR-IOV network adapter 1", Summary: pfID},
				Backing:    backing,
				Connectable: &types.VirtualDeviceConnectInfo{
					StartConnected: true, Connected: true, AllowGuestControl: true,
				},
			},
			AddressType: string(types.VirtualEthernetCardMacTypeGenerated),
		},
		AllowGuestOSMtuChange: types.NewBool(true),
		SriovBacking: &types.VirtualSriovEthernetCardSriovBackingInfo{
			PhysicalFunctionBacking: &types.VirtualPCIPassthroughDeviceBackingInfo{
				VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: pf.DeviceName},
				Id:                             pfID,
				DeviceId:                       pf.DeviceID,
				SystemId:                       lh.hs.Hardware.SystemInfo.Uuid,
				VendorId:                       0x15b3,
			},
		},
	}, nil
}

func latencyLevel(level string) types.LatencySensitivitySensitivityLevel {
	switch strings.ToLower(level) {
	case "high":
		return types.LatencySensitivitySensitivityLevelHigh
	case "low":
		return types.LatencySensitivitySensitivityLevelLow
	case "medium":
		return types.LatencySensitivitySensitivityLevelMedium
	default:
		return types.LatencySensitivitySensitivityLevelNormal
	}
}

// resourceSpec: memory reserved (locked to max) or not; a high latency sensitivity comes with the
// full CPU reservation it needs.
func resourceSpec(spec *types.VirtualMachineConfigSpec, lh *labHost, memoryMB int64, cpus int64, reserved bool, level string) {
	spec.MemoryReservationLockedToMax = types.NewBool(reserved)
	memory := int64(0)
	if reserved {
		memory = memoryMB
	}
	spec.MemoryAllocation = &types.ResourceAllocationInfo{Reservation: types.NewInt64(memory)}
	spec.LatencySensitivity = &types.LatencySensitivity{Level: latencyLevel(level)}
	cpu := int64(0)
	if latencyLevel(level) == types.LatencySensitivitySensitivityLevelHigh {
		cpu = cpus * int64(lh.hs.Summary.Hardware.CpuMhz)
	}
	spec.CpuAllocation = &types.ResourceAllocationInfo{Reservation: types.NewInt64(cpu)}
}

func (l *lab) createVM(ctx context.Context, name string, v *VMView) error {
	lh := l.hosts[v.Host]
	if lh == nil {
		return fmt.Errorf("VM %s: no host %q", name, v.Host)
	}
	spec := types.VirtualMachineConfigSpec{
		Name:     name,
		GuestId:  string(types.VirtualMachineGuestOsIdentifierRhel8_64Guest),
		Files:    &types.VirtualMachineFileInfo{VmPathName: "[" + l.view.Datastore + "]"},
		NumCPUs:  int32(v.CPUs),
		MemoryMB: int64(v.MemoryMB),
	}
	resourceSpec(&spec, lh, int64(v.MemoryMB), int64(v.CPUs), v.MemoryReserved, v.LatencySensitivity)
	var devices object.VirtualDeviceList
	service := &types.VirtualVmxnet3{VirtualVmxnet: types.VirtualVmxnet{VirtualEthernetCard: types.VirtualEthernetCard{
		VirtualDevice: types.VirtualDevice{Backing: &types.VirtualEthernetCardNetworkBackingInfo{
			VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: "VM Network"},
		}},
		AddressType: string(types.VirtualEthernetCardMacTypeGenerated),
	}}}
	devices = append(devices, service)
	if v.VfPF != nil {
		card, err := l.sriovCard(lh, *v.VfPF)
		if err != nil {
			return err
		}
		card.AllowGuestOSMtuChange = types.NewBool(v.AllowGuestMtuChange == nil || *v.AllowGuestMtuChange)
		devices = append(devices, card)
	}
	spec.DeviceChange, _ = devices.ConfigSpec(types.VirtualDeviceConfigSpecOperationAdd)
	host := object.NewHostSystem(l.client, lh.hs.Self)
	result, err := waitTask(l.folders.VmFolder.CreateVM(ctx, spec, object.NewResourcePool(l.client, l.pool), host))
	if err != nil {
		return err
	}
	if v.PoweredOn {
		vm := object.NewVirtualMachine(l.client, result.(types.ManagedObjectReference))
		_, err = waitTask(vm.PowerOn(ctx))
	}
	return err
}

// ------------------------------------------------------------------------------ /lab endpoints

func (l *lab) snapshot() *View {
	ctx := simulator.SpoofContext()
	out := &View{
		Version:    changes.Load(), // read first: a change during the snapshot shows next time
		Datacenter: l.view.Datacenter, Cluster: l.view.Cluster, Datastore: l.view.Datastore,
		RebootDelayS: l.delay().Seconds(),
		Hosts:        map[string]*HostView{}, VMs: map[string]*VMView{},
	}
	for name, lh := range l.hosts {
		lh.lockAll(ctx, func() {
			hv := &HostView{
				BootTime:        fromTime(lh.hs.Runtime.BootTime),
				BootCount:       lh.bootCount,
				Connected:       lh.connected,
				MaintenanceMode: lh.hs.Runtime.InMaintenanceMode,
				PowerPolicy:     policyName(lh.power.Info.CurrentPolicy.Key),
				PendingOther:    lh.pendingOther,
				RebootRequired:  lh.rebootRequired(),
				PFs:             map[string]*PFView{},
			}
			for _, pf := range lh.pfs {
				pv := pf.PFView
				hv.PFs[pf.id] = &pv
			}
			out.Hosts[name] = hv
		})
	}
	for _, e := range simulator.Map.All("VirtualMachine") {
		vm := e.(*simulator.VirtualMachine)
		ctx.WithLock(vm, func() {
			lh := l.hostOfVM(vm)
			if lh == nil || vm.Config == nil {
				return
			}
			v := &VMView{
				Host:           lh.name,
				PoweredOn:      vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn,
				MemoryMB:       int(vm.Config.Hardware.MemoryMB),
				CPUs:           int(vm.Config.Hardware.NumCPU),
				MemoryReserved: vm.Config.MemoryReservationLockedToMax != nil && *vm.Config.MemoryReservationLockedToMax,
				// a power-off and on between two polls leaves powered_on as it was: the boot time moves
				BootTime: fromTime(vm.Summary.Runtime.BootTime),
			}
			if vm.Config.LatencySensitivity != nil {
				v.LatencySensitivity = string(vm.Config.LatencySensitivity.Level)
			}
			if cards := sriovCards(object.VirtualDeviceList(vm.Config.Hardware.Device)); len(cards) > 0 {
				id := pfID(cards[0])
				v.VfPF = &id
				v.AllowGuestMtuChange = types.NewBool(cards[0].AllowGuestOSMtuChange != nil && *cards[0].AllowGuestOSMtuChange)
			}
			out.VMs[vm.Name] = v
		})
	}
	if d := l.theDVS(); d != nil {
		out.DVS = &DVSView{Name: d.name, MaxMtu: int(d.maxMtu), Members: map[string][]string{}}
		for _, m := range d.hosts {
			if lh := l.hostsByRef[*m.Config.Host]; lh != nil {
				out.DVS.Members[lh.name] = memberPnics(m)
			}
		}
		if pg := d.portgroup(""); pg != nil {
			out.DVS.Portgroup = pg.name
		}
	}
	return out
}

// apply sets what a partial view names. Host fields are set directly; VM and DVS changes go
// through the vSphere API in process, as if an administrator made them.
func (l *lab) apply(ctx context.Context, p *Patch) error {
	l.updateMu.Lock()
	defer l.updateMu.Unlock()
	if p.RebootDelayS.Set {
		l.mu.Lock()
		l.rebootDelay = time.Duration(p.RebootDelayS.V * float64(time.Second))
		l.mu.Unlock()
	}
	for _, name := range sortedKeys(p.Hosts) {
		lh := l.hosts[name]
		if lh == nil {
			return fmt.Errorf("no host %q", name)
		}
		if err := l.applyHost(lh, p.Hosts[name]); err != nil {
			return err
		}
	}
	if p.DVS.Set {
		if err := l.applyDVS(ctx, p.DVS.V); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(p.VMs) {
		if err := l.applyVM(ctx, name, p.VMs[name]); err != nil {
			return fmt.Errorf("VM %s: %w", name, err)
		}
	}
	return nil
}

func (l *lab) applyHost(lh *labHost, hp *HostPatch) error {
	var err error
	ctx := simulator.SpoofContext()
	lh.lockAll(ctx, func() {
		for _, id := range sortedKeys(hp.PFs) {
			pf := lh.pf(id)
			if pf == nil {
				err = fmt.Errorf("host %s has no PF %s", lh.name, id)
				return
			}
			pp := hp.PFs[id]
			setIf(&pf.Capable, pp.Capable)
			setIf(&pf.MaxVFs, pp.MaxVFs)
			setIf(&pf.HwVFs, pp.HwVFs)
			setIf(&pf.Enabled, pp.Enabled)
			setIf(&pf.Requested, pp.Requested)
			setIf(&pf.ActiveEnabled, pp.ActiveEnabled)
			setIf(&pf.ActiveRequested, pp.ActiveRequested)
		}
		if hp.PowerPolicy.Set {
			policy, ok := policyByName(hp.PowerPolicy.V)
			if !ok {
				err = fmt.Errorf("unknown power policy %q", hp.PowerPolicy.V)
				return
			}
			lh.power.setPolicy(ctx, policy)
		}
		if hp.BootTime.Set {
			ctx.Update(lh.hs, []types.PropertyChange{{Name: "runtime.bootTime", Val: epoch(hp.BootTime.V)}})
		}
		if hp.BootCount.Set && hp.BootCount.V != lh.bootCount {
			lh.rebooting = 0 // the world's boot stands for any reboot vCenter had under way
		}
		setIf(&lh.bootCount, hp.BootCount)
		setIf(&lh.pendingOther, hp.PendingOther)
		setIf(&lh.connected, hp.Connected)
		if hp.MaintenanceMode.Set {
			ctx.Update(lh.hs, []types.PropertyChange{{Name: "runtime.inMaintenanceMode", Val: hp.MaintenanceMode.V}})
		}
		lh.render(ctx)
	})
	return err
}

func setIf[T any](dst *T, o opt[T]) {
	if o.Set {
		*dst = o.V
	}
}

func (l *lab) findVM(name string) *simulator.VirtualMachine {
	for _, e := range simulator.Map.All("VirtualMachine") {
		if vm := e.(*simulator.VirtualMachine); vm.Name == name {
			return vm
		}
	}
	return nil
}

func (l *lab) applyVM(ctx context.Context, name string, vp *VMPatch) error {
	svm := l.findVM(name)
	if svm == nil {
		return errors.New("no such VM")
	}
	vm := object.NewVirtualMachine(l.client, svm.Self)
	var lh *labHost
	var memoryMB, cpus int64
	var reserved bool
	var level string
	var cards []*types.VirtualSriovEthernetCard
	simulator.SpoofContext().WithLock(svm, func() {
		lh = l.hostOfVM(svm)
		memoryMB = int64(svm.Config.Hardware.MemoryMB)
		cpus = int64(svm.Config.Hardware.NumCPU)
		reserved = svm.Config.MemoryReservationLockedToMax != nil && *svm.Config.MemoryReservationLockedToMax
		if svm.Config.LatencySensitivity != nil {
			level = string(svm.Config.LatencySensitivity.Level)
		}
		cards = sriovCards(object.VirtualDeviceList(svm.Config.Hardware.Device))
	})
	wait := func(task *object.Task, err error) error {
		_, err = waitTask(task, err)
		return err
	}
	if vp.PoweredOn.Set && !vp.PoweredOn.V {
		if err := wait(vm.PowerOff(ctx)); err != nil {
			return err
		}
	}
	if vp.MemoryReserved.Set || vp.LatencySensitivity.Set {
		setIf(&reserved, vp.MemoryReserved)
		setIf(&level, vp.LatencySensitivity)
		spec := types.VirtualMachineConfigSpec{}
		resourceSpec(&spec, lh, memoryMB, cpus, reserved, level)
		if err := wait(vm.Reconfigure(ctx, spec)); err != nil {
			return err
		}
	}
	if vp.VfPF.Set || vp.AllowGuestMtuChange.Set {
		var changes []types.BaseVirtualDeviceConfigSpec
		want := (*string)(nil)
		if len(cards) > 0 {
			id := pfID(cards[0])
			want = &id
		}
		if vp.VfPF.Set {
			want = vp.VfPF.V
		}
		allow := len(cards) == 0 || cards[0].AllowGuestOSMtuChange == nil || *cards[0].AllowGuestOSMtuChange
		setIf(&allow, vp.AllowGuestMtuChange)
		for _, c := range cards {
			changes = append(changes, &types.VirtualDeviceConfigSpec{
				Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: c,
			})
		}
		if want != nil {
			card, err := l.sriovCard(lh, *want)
			if err != nil {
				return err
			}
			card.AllowGuestOSMtuChange = types.NewBool(allow)
			changes = append(changes, &types.VirtualDeviceConfigSpec{
				Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: card,
			})
		}
		if len(changes) > 0 {
			if err := wait(vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{DeviceChange: changes})); err != nil {
				return err
			}
		}
	}
	if vp.PoweredOn.Set && vp.PoweredOn.V {
		if err := wait(vm.PowerOn(ctx)); err != nil {
			return err
		}
	}
	return nil
}

func (l *lab) serveHTTP(user, pass string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 ||
			subtle.ConstantTimeCompare([]byte(p), []byte(pass)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="roce-wizard lab"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		switch {
		case r.URL.Path == "/lab/state" && r.Method == http.MethodGet:
			if since := r.URL.Query().Get("since"); since != "" && since == strconv.FormatInt(changes.Load(), 10) {
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(&View{Version: changes.Load(), Unchanged: true})
				return
			}
		case r.URL.Path == "/lab/update" && r.Method == http.MethodPost:
			var patch Patch
			body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
			if err == nil {
				err = json.Unmarshal(body, &patch)
			}
			if err == nil {
				err = l.apply(r.Context(), &patch)
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		case r.URL.Path == "/lab/reboot" && r.Method == http.MethodPost:
			lh := l.hosts[r.URL.Query().Get("host")]
			if lh == nil {
				http.Error(w, "no such host", http.StatusNotFound)
				return
			}
			ctx := simulator.SpoofContext()
			ctx.WithLock(lh.hs, func() { l.startReboot(ctx, lh) })
		default:
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(l.snapshot())
	}
}

// ------------------------------------------------------------------------------ TLS

// labTLS makes a CA for this run and a server certificate it signs (127.0.0.1, ::1, localhost),
// like vCenter's VMCA: clients trust the CA file. vcsim's default certificate is Go's
// httptest certificate, whose private key is public.
func labTLS(caFile string) (*tls.Config, string, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", err
	}
	serial := func() *big.Int {
		n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
		return n
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "roce-wizard lab CA", Organization: []string{"roce-wizard practice lab"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, "", err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", err
	}
	leafTemplate := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "127.0.0.1", Organization: []string{"roce-wizard practice lab"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTemplate, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, "", err
	}
	pemCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	tmp := caFile + ".tmp"
	if err := os.WriteFile(tmp, pemCA, 0o644); err != nil {
		return nil, "", err
	}
	if err := os.Rename(tmp, caFile); err != nil {
		return nil, "", err
	}
	sum := sha1.Sum(leafDER)
	hexes := make([]string, len(sum))
	for i, b := range sum {
		hexes[i] = fmt.Sprintf("%02X", b)
	}
	config := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER, caDER}, PrivateKey: key}},
	}
	return config, strings.Join(hexes, ":"), nil
}

// ------------------------------------------------------------------------------ main

func main() {
	listen := flag.String("l", "127.0.0.1:0", "listen address")
	statePath := flag.String("state", "", "the world's vSphere view (JSON) to build the inventory from")
	caPath := flag.String("ca", "", "where to write the lab CA certificate (PEM); default: vcenter-ca.pem beside -state")
	user := flag.String("username", "administrator@vsphere.local", "login user name")
	stdinExit := flag.Bool("stdin-exit", false, "exit when stdin closes (the lab's process went away)")
	flag.Parse()
	log.SetPrefix("roce-wizard-vcsim: ")
	log.SetFlags(0)

	password := os.Getenv("ROCE_WIZARD_VCSIM_PASSWORD")
	if *statePath == "" || password == "" {
		fmt.Fprintln(os.Stderr, "usage: ROCE_WIZARD_VCSIM_PASSWORD=… roce-wizard-vcsim -l 127.0.0.1:0 -state FILE.json [-ca FILE.pem]")
		os.Exit(2)
	}
	raw, err := os.ReadFile(*statePath)
	check(err, "state file")
	var view View
	check(json.Unmarshal(raw, &view), "state file "+*statePath)
	if view.Datacenter == "" {
		view.Datacenter = "Datacenter"
	}
	if view.Cluster == "" {
		view.Cluster = "Cluster"
	}
	if view.Datastore == "" {
		view.Datastore = "datastore1"
	}
	dir := filepath.Dir(*statePath)
	if *caPath == "" {
		*caPath = filepath.Join(dir, "vcenter-ca.pem")
	}
	dsDir, err := os.MkdirTemp(dir, "vcenter-datastore-")
	check(err, "datastore directory")

	model := simulator.VPX()
	model.Datacenter, model.Cluster, model.ClusterHost, model.Host = 0, 0, 0, 0
	model.Machine, model.Datastore, model.Portgroup, model.Autostart = 0, 0, 0, false
	model.ServiceContent.About.FullName = "VMware vCenter Server 7.0.2 build-17694817 (roce-wizard lab, govmomi simulator)"
	check(model.Create(), "simulator model")
	ctx := context.Background()
	l := build(ctx, model, &view, dsDir)

	tlsConfig, thumbprint, err := labTLS(*caPath)
	check(err, "TLS certificate")
	model.Service.TLS = tlsConfig
	model.Service.Listen = &url.URL{Host: *listen, User: url.UserPassword(*user, password)}
	mux := http.NewServeMux()
	mux.HandleFunc("/lab/", l.serveHTTP(*user, password))
	model.Service.ServeMux = mux
	server := model.Service.NewServer()

	u := *server.URL
	u.User = nil
	port, _ := strconv.Atoi(u.Port())
	ready, _ := json.Marshal(map[string]any{
		"url": u.String(), "port": port, "thumbprint": thumbprint, "ca_file": *caPath,
		"username": *user, "pid": os.Getpid(),
	})
	fmt.Println(string(ready))
	os.Stdout.Sync()
	log.Printf("serving %s with %d hosts, %d VMs", u.String(), len(view.Hosts), len(view.VMs))

	done := make(chan os.Signal, 1)
	signal.Notify(done, syscall.SIGINT, syscall.SIGTERM)
	if *stdinExit {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			done <- syscall.SIGTERM
		}()
	}
	<-done
	server.Close()
	model.Remove()
	_ = os.RemoveAll(dsDir)
}
